package gomlxmodel

import (
	"bufio"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/cpu"
)

// Processor describes the processor this process runs on, as far as it can decide the bits of code that
// XLA compiles for it: the vendor, family and model (from /proc/cpuinfo where there is one), the
// architecture and the vector extensions present. XLA's CPU compiler targets the host: it picks vector
// widths and, unless told otherwise, approximations of math functions (such as rsqrt) by processor, so one
// seed's XLA results are bit-identical on one kind of processor but may differ in the last bits on
// another, and a sampled run then diverges. Measured: the committed notebooks' runs reproduce on the
// project's earlier machines and diverge after 20–30 training steps on an AVX-512/AMX Xeon. There,
// XLA_FLAGS=--xla_cpu_max_isa=AVX2 or --xla_cpu_prefer_vector_width=256 leave the bits as they are,
// --xla_cpu_enable_platform_dependent_math=false changes them (and then a narrower vector width changes
// them again), and no setting reproduced the earlier machines' runs. The pure-Go backend depends on the
// processor far less (at Go's default GOAMD64=v1 the compiler fuses no multiply-adds; math.Exp differs
// only between processors with and without AVX and FMA): its whole chapter printed the same numbers on
// that Xeon as on an earlier machine. An engine reads it once, when it is made.
func Processor() string {
	var parts []string
	if id := cpuinfo("vendor_id", "cpu family", "model"); id != "" {
		parts = append(parts, id)
	}
	parts = append(parts, runtime.GOARCH)
	var exts []string
	for _, f := range []struct {
		name string
		has  bool
	}{
		{"avx", cpu.X86.HasAVX}, {"avx2", cpu.X86.HasAVX2}, {"fma", cpu.X86.HasFMA},
		{"avx512f", cpu.X86.HasAVX512F}, {"avx512bw", cpu.X86.HasAVX512BW}, {"avx512vl", cpu.X86.HasAVX512VL},
		{"avx512vnni", cpu.X86.HasAVX512VNNI}, {"avx512bf16", cpu.X86.HasAVX512BF16}, {"avxvnni", cpu.X86.HasAVXVNNI},
		{"amxbf16", cpu.X86.HasAMXBF16}, {"asimd", cpu.ARM64.HasASIMD}, {"sve", cpu.ARM64.HasSVE},
	} {
		if f.has {
			exts = append(exts, f.name)
		}
	}
	if len(exts) > 0 {
		parts = append(parts, strings.Join(exts, ","))
	}
	return strings.Join(parts, " ")
}

// cpuinfo returns the values of the given fields of the first processor in /proc/cpuinfo, joined by
// spaces in the order asked, or "" where the file cannot be read or lacks one of them.
func cpuinfo(fields ...string) string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	found := map[string]string{}
	for sc := bufio.NewScanner(f); sc.Scan(); {
		line := sc.Text()
		if line == "" { // the end of the first processor's block
			break
		}
		if key, value, ok := strings.Cut(line, ":"); ok {
			found[strings.TrimSpace(key)] = strings.TrimSpace(value)
		}
	}
	values := make([]string, len(fields))
	for i, k := range fields {
		v, ok := found[k]
		if !ok || v == "" {
			return ""
		}
		values[i] = v
	}
	return strings.Join(values, " ")
}
