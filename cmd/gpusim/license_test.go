package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The repository ships the Apache License 2.0, TensorFlow's, whole: its nine sections of terms
// and the appendix, not a summary or a link.
func TestLicenseIsApache2(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(b)), " ")
	for _, want := range []string{"Apache License Version 2.0, January 2004", "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION",
		"1. Definitions.", "2. Grant of Copyright License.", "3. Grant of Patent License.", "4. Redistribution.",
		"5. Submission of Contributions.", "6. Trademarks.", "7. Disclaimer of Warranty.", "8. Limitation of Liability.",
		"9. Accepting Warranty or Additional Liability.", "END OF TERMS AND CONDITIONS", "APPENDIX: How to apply the Apache License to your work."} {
		if !strings.Contains(text, want) {
			t.Errorf("LICENSE lacks %q", want)
		}
	}
}
