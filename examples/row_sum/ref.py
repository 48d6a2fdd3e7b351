import numpy as np


def reference(inputs, dims):
    return {"Y": inputs["X"].sum(axis=1)}
