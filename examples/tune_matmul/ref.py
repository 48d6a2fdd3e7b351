# float64 reference for examples/tune_matmul: C = A·B.
def reference(inputs, dims):
    return {"C": inputs["A"] @ inputs["B"]}
