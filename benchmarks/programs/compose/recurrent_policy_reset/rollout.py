def reset_finished(h, done):
    """Zero the recurrent state of the environments whose episode just ended."""
    h.mul_((1.0 - done).unsqueeze(-1))
    return h


def collect(policy, env_obs, env_done):
    h = policy.initial_state(env_obs[0].size(0))
    logps = []
    for obs, done in zip(env_obs, env_done):
        logits, h = policy(obs, h)
        logps.append(logits.log_softmax(-1)[:, 0])
        h = reset_finished(h, done)
    return logps
