# float64 reference for examples/mlx_body: the tanh approximation of GELU.
import numpy as np


def reference(inputs, dims):
    v = inputs["inp"]
    inner = np.sqrt(2.0 / np.pi) * (v + 0.044715 * v**3)
    return {"out": 0.5 * v * (1.0 + np.tanh(inner))}
