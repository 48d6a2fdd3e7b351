package run_test

import (
	"os"
	"testing"

	"github.com/mltop/mltop/internal/enginetest"
)

// TestMain registers the engine's test family (test_scale).
func TestMain(m *testing.M) {
	enginetest.Register()
	if os.Getenv(raceWorkerEnv) == "1" { // a worker for TestSweepRaceThroughWorker
		os.Exit(serveRaceWorker())
	}
	os.Exit(m.Run())
}
