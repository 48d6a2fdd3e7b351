# float64 reference for examples/templated_entry: out = alpha * x + b.
# dims holds the dims, knobs and the manifest's values (alpha).


def reference(inputs, dims):
    return {"out": dims["alpha"] * inputs["x"] + inputs["b"]}
