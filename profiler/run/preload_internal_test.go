package run

import (
	"testing"
	"time"
)

// The load gate: loads enter while it is open; once shut, a load waits
// until it opens again, drain waits for the loads in flight, and close
// turns away the waiting loads and every later one.
func TestLoadGate(t *testing.T) {
	var g loadGate
	if !g.enter() { // a load in flight when the warm-up begins
		t.Fatal("an open gate turned a load away")
	}
	g.shutOut()
	entered := make(chan bool, 1)
	go func() { entered <- g.enter() }()
	drained := make(chan struct{})
	go func() {
		g.drain()
		close(drained)
	}()
	select {
	case <-entered:
		t.Fatal("a load started with the gate shut")
	case <-drained:
		t.Fatal("drain returned with a load in flight")
	case <-time.After(20 * time.Millisecond):
	}
	g.leave()
	select {
	case <-drained:
	case <-time.After(10 * time.Second):
		t.Fatal("drain still waits after the load in flight ended")
	}
	select {
	case <-entered:
		t.Fatal("a load started with the gate shut (after drain)")
	case <-time.After(20 * time.Millisecond):
	}
	g.open()
	select {
	case ok := <-entered:
		if !ok {
			t.Fatal("the open gate turned the waiting load away")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting load did not start when the gate opened")
	}
	g.leave()
	g.shutOut()
	go func() { entered <- g.enter() }()
	g.close()
	select {
	case ok := <-entered:
		if ok {
			t.Fatal("a load started after close")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("close left a load waiting")
	}
	if g.enter() {
		t.Fatal("a load started after close")
	}
}
