package main

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestReadmeExamplesWriteFreshFolders: a command a reader copies from the
// README must not write into the reference runs tracked under results/.
func TestReadmeExamplesWriteFreshFolders(t *testing.T) {
	f, err := os.Open("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	commands := 0
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "ratebench ") && !strings.Contains(line, "`ratebench ") {
			continue
		}
		commands++
		if strings.Contains(line, "-out results/") || strings.Contains(line, "compare results/") {
			t.Errorf("README.md line %d writes into the tracked results/: %s", n, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if commands < 5 {
		t.Fatalf("found %d ratebench commands in README.md: is it still the README?", commands)
	}
}
