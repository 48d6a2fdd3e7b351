package metal

// testDev is the device the emulation and calibration tests plan for.
var testDev = DeviceInfo(RawDevice{Name: "Apple M1 Max", MaxTGMPerGroup: 32768, MaxThreadsWidth: 1024, HasTimestampSet: true, StageBoundary: true})

// TestDev is testDev, for the external tests.
var TestDev = testDev
