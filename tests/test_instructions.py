"""benchmarks/instructions.py: the instructions of a check, summed over its processes."""

from conftest import benchmark_script

instructions = benchmark_script("instructions")


def test_the_instructions_of_every_traced_process_are_summed():
    log = """==811== Callgrind, a call-graph generating cache profiler
==811== Events    : Ir
==811== Collected : 1274204234
==811==
==811== I   refs:      1,274,204,234
==812== I   refs:      13,848,765,391
==812== Events    : Ir
"""
    assert instructions.counted_in(log) == 1_274_204_234 + 13_848_765_391
    assert instructions.counted_in("valgrind: command not found\n") == 0
