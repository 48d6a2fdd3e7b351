package ui

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestSmokeRender(t *testing.T) {
	m := NewModel(&fakeExec{}, testOptions())
	for _, sz := range [][2]int{{120, 40}, {80, 24}} {
		m.width, m.height = sz[0], sz[1]
		fmt.Println(ansi.Strip(m.Render()))
	}
}
