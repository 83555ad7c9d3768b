# source: pytorch/pytorch test/test_torch.py TestTorchDeviceType.test_copy_mem_overlap (an output identical to the input is allowed; only a partial overlap is refused), here n-step discounted reward sums by doubling, each `sums[:-span] += factor * sums[span:]` writing back the memory it was read from
# expect: none
# torch: ok
import torch


def window_sums(rewards, gamma, window):
    """sums[t] = sum over k < window of gamma**k * rewards[t + k] (window a power of two)."""
    sums = rewards.clone()
    span, factor = 1, gamma
    while span < window:
        # The right side is a new tensor; the assignment copies the slice onto itself.
        sums[:-span] += factor * sums[span:]
        span, factor = span * 2, factor * factor
    return sums


def bonus_for_steps(sums, start, stop, bonus):
    sums[start:stop] += bonus
    return sums


torch.manual_seed(0)
rewards = torch.rand(16)
got = bonus_for_steps(window_sums(rewards, 0.9, 4), 1, 4, 1.0)
expected = torch.stack([sum(0.9 ** k * rewards[t + k] for k in range(min(4, 16 - t)))
                        for t in range(16)])
expected[1:4] += 1.0
if not torch.allclose(got, expected, atol=1e-6):
    raise SystemExit(1)
