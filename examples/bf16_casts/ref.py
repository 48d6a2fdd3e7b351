# float64 reference for examples/bf16_casts: GELU, tanh approximation.
import numpy as np


def reference(inputs, dims):
    x = inputs["inp"]
    return {"out": 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))}
