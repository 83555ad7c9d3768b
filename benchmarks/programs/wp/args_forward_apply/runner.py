import time

TIMINGS = {}


def run_timed(fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    TIMINGS[fn.__name__] = time.perf_counter() - start
    return result
