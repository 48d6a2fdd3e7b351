package pyref

// Rule is the one rule that picks the interpreter (Interpreter), for
// messages: the product and the tests both follow it, so a test that skips
// for want of NumPy names the interpreter a user would get.
const Rule = "$" + PythonEnv + ", else python3 on the PATH"
