package metal

// TestDev is the device the internal tests plan for, for the external ones.
var TestDev = testDev
