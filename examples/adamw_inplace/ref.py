import numpy as np


def reference(inputs, dims):
    lr, b1, b2, eps, wd, t = 1e-3, 0.9, 0.999, 1e-8, 0.01, dims["t"]
    p, g, m, v = inputs["params"], inputs["grads"], inputs["m"], inputs["v"]
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    mhat = m / (1 - b1 ** t)
    vhat = v / (1 - b2 ** t)
    p = p - lr * (mhat / (np.sqrt(vhat) + eps) + wd * p)
    return {"params": p, "m": m, "v": v}
