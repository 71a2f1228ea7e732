package xlacache

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// abiStruct is a struct that pjrt_abi.h declares: its name without the prefix xc_ (the real header's is PJRT_
// and the same) and its members in order.
type abiStruct struct {
	name    string
	members []string
}

var (
	structStart = regexp.MustCompile(`^typedef struct xc_(\w+) \{$`)
	memberFunc  = regexp.MustCompile(`\(\*(\w+)\)\s*\(`)              // a function pointer: type (*name)(args);
	memberPlain = regexp.MustCompile(`(\w+)\s*(\[\s*\d+\s*\])?\s*;$`) // type name; or type name[N];
	sizeEnum    = regexp.MustCompile(`\bxc_(\w+)_STRUCT_SIZE\s*=`)
)

// parseABIHeader reads the structs and the xc_..._STRUCT_SIZE constants that pjrt_abi.h declares.
func parseABIHeader(t *testing.T, text string) (structs []abiStruct, sizes []string) {
	t.Helper()
	var cur *abiStruct
	for n, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if m := structStart.FindStringSubmatch(line); m != nil {
			structs = append(structs, abiStruct{name: m[1]})
			cur = &structs[len(structs)-1]
			continue
		}
		for _, m := range sizeEnum.FindAllStringSubmatch(line, -1) {
			sizes = append(sizes, m[1])
		}
		if cur == nil || line == "" {
			continue
		}
		if strings.HasPrefix(line, "}") {
			cur = nil
			continue
		}
		if m := memberFunc.FindStringSubmatch(line); m != nil {
			cur.members = append(cur.members, m[1])
		} else if m := memberPlain.FindStringSubmatch(line); m != nil {
			cur.members = append(cur.members, m[1])
		} else {
			t.Fatalf("pjrt_abi.h:%d: cannot read the member declared in %q (one member a line, as type name;)", n+1, line)
		}
	}
	return structs, sizes
}

// abiProgram is a C program that includes go-xla's pjrt_c_api.h and pjrt_abi.h and prints, for each check, a
// line "name ours theirs".
func abiProgram(structs []abiStruct, sizes []string) string {
	var b strings.Builder
	b.WriteString(`#include <stdio.h>
#include <stddef.h>
#include "pjrt_c_api.h"
#include "pjrt_abi.h"
#define SHOW(name, ours, theirs) printf("%s %zu %zu\n", name, (size_t)(ours), (size_t)(theirs))
#define MEMBER(s, m) \
	SHOW(#s "." #m ".offset", offsetof(xc_##s, m), offsetof(PJRT_##s, m)); \
	SHOW(#s "." #m ".size", sizeof(((xc_##s *)0)->m), sizeof(((PJRT_##s *)0)->m))
int main(void) {
`)
	for _, s := range structs {
		for _, m := range s.members {
			if strings.HasPrefix(m, "unused_") {
				continue // no counterpart: the offset of the member after it checks its length
			}
			fmt.Fprintf(&b, "\tMEMBER(%s, %s);\n", s.name, m)
		}
		if s.name != "Api" { // the table is declared only up to the last function called
			fmt.Fprintf(&b, "\tSHOW(\"%[1]s.sizeof\", sizeof(xc_%[1]s), sizeof(PJRT_%[1]s));\n", s.name)
		}
	}
	for _, name := range sizes {
		fmt.Fprintf(&b, "\tSHOW(\"%[1]s_STRUCT_SIZE\", xc_%[1]s_STRUCT_SIZE, PJRT_%[1]s_STRUCT_SIZE);\n", name)
	}
	// The copy of the table handed to go-xla covers go-xla's whole PJRT_Api: 1 (true) on both sides.
	b.WriteString(`	SHOW("XC_API_COPY_MIN_BYTES>=sizeof(PJRT_Api)", XC_API_COPY_MIN_BYTES >= sizeof(PJRT_Api), 1);
	printf("version %d.%d\n", PJRT_API_MAJOR, PJRT_API_MINOR);
	return 0;
}
`)
	return b.String()
}

// TestABIMatchesGoXLA: pjrt_abi.h, the declarations hook.go compiles against, agrees with the PJRT C API header
// that go-xla (at the version in go.mod) is compiled against: every member it declares has the real member's
// offset and size, every argument struct has the real struct's size and struct_size, and the offsets of the
// API table's functions that hook.go calls are the real ones. A C program that includes both headers prints
// each pair of values; the C compiler is go env CC. Without go-xla's header or a C compiler the test skips,
// except under CI=true, where it fails.
func TestABIMatchesGoXLA(t *testing.T) {
	unavailable := t.Skipf
	if os.Getenv("CI") == "true" {
		unavailable = t.Fatalf
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", "github.com/gomlx/go-xla").Output()
	if err != nil {
		unavailable("cannot locate go-xla with go list -m: %v", err)
		return
	}
	dir, version, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	real := filepath.Join(dir, "pkg", "pjrt", "pjrt_c_api.h")
	if _, err := os.Stat(real); dir == "" || err != nil {
		unavailable("go-xla %s's PJRT C API header not found (%q): run go mod download github.com/gomlx/go-xla", version, real)
		return
	}
	ccOut, err := exec.Command("go", "env", "CC").Output()
	cc := strings.Fields(string(ccOut))
	if err != nil || len(cc) == 0 {
		unavailable("no C compiler: go env CC: %v", err)
		return
	}
	if _, err := exec.LookPath(cc[0]); err != nil {
		unavailable("no C compiler: %v", err)
		return
	}

	ours, err := os.ReadFile("pjrt_abi.h")
	if err != nil {
		t.Fatal(err)
	}
	structs, sizes := parseABIHeader(t, string(ours))
	if len(structs) == 0 || len(sizes) == 0 {
		t.Fatalf("read %d structs and %d struct sizes from pjrt_abi.h", len(structs), len(sizes))
	}
	pkg, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	src, bin := filepath.Join(tmp, "abi.c"), filepath.Join(tmp, "abi")
	if err := os.WriteFile(src, []byte(abiProgram(structs, sizes)), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(cc[1:], "-std=c11", "-Wall", "-I", pkg, "-I", filepath.Dir(real), "-o", bin, src)
	if msg, err := exec.Command(cc[0], args...).CombinedOutput(); err != nil {
		t.Fatalf("compiling pjrt_abi.h next to %s: %v\n%s", real, err, msg)
	}
	res, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	checks := 0
	for line := range strings.Lines(string(res)) {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == "version" {
			t.Logf("go-xla %s, PJRT C API %s", version, f[1])
			continue
		}
		if len(f) != 3 {
			t.Fatalf("unexpected line %q", line)
		}
		checks++
		if a, b := mustAtoi(t, f[1]), mustAtoi(t, f[2]); a != b {
			t.Errorf("%s: pjrt_abi.h %d, go-xla %s's header %d", f[0], a, version, b)
		}
	}
	t.Logf("%d checks of %d structs against %s", checks, len(structs), real)
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
