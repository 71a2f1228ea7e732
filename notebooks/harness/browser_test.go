//go:build unix

package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The figures of an untrusted notebook (every cloned one: no trust database
// has signed it) must render where a reader looks: Jupyter's notebook UI,
// `jupyter nbconvert --to html`, and code hosts' previews (which show
// image/png and sanitize HTML). TestFiguresRenderUntrusted copies the
// committed notebooks to a temporary directory, serves them with a Jupyter
// that has fresh data and config directories, opens each in headless
// Chromium and counts the figures that render.
//
// A figure output is a display_data or execute_result output with image/png
// (chart/nbdisplay.Display), or, in the old form, with an inline <svg> in
// text/html or image/svg+xml and no image/png (gonbui.DisplaySVG): Jupyter
// strips or drops those in an untrusted notebook, so the old form fails the
// test. Until the chapter is re-executed with chart/nbdisplay (no chapter
// notebook holds an image/png figure yet), old-form figures are logged
// instead; the fixtures in testdata (figure_png.ipynb, figure_svg_html.ipynb)
// show the check at work on both forms.

// browserWait bounds each wait: the server's start, one page, one nbconvert.
const browserWait = 90 * time.Second

// figureCount is what a notebook's JSON holds: image/png figures and
// old-form (SVG only) figures.
type figureCount struct{ png, old int }

var svgTag = regexp.MustCompile(`(?i)<svg[\s>]`)

// countFigures reads the figure outputs of the notebook at path.
func countFigures(path string) (figureCount, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return figureCount{}, err
	}
	var nb struct {
		Cells []struct {
			Outputs []struct {
				Type string                     `json:"output_type"`
				Data map[string]json.RawMessage `json:"data"`
			} `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &nb); err != nil {
		return figureCount{}, fmt.Errorf("%s: %v", path, err)
	}
	var n figureCount
	for _, c := range nb.Cells {
		for _, o := range c.Outputs {
			if o.Type != "display_data" && o.Type != "execute_result" {
				continue
			}
			// A MIME value is a string or a list of lines.
			var html any
			json.Unmarshal(o.Data["text/html"], &html)
			switch _, svg := o.Data["image/svg+xml"]; {
			case o.Data["image/png"] != nil:
				n.png++
			case svg || svgTag.MatchString(fmt.Sprint(html)):
				n.old++
			}
		}
	}
	return n, nil
}

// renderedFigures counts, in a notebook page's DOM, the PNG images and
// inline SVG documents in output areas (classic Notebook and Notebook 7 /
// JupyterLab class names).
func renderedFigures(dom string) (png, svg int) {
	png = len(regexp.MustCompile(`<img[^>]*\ssrc="data:image/png;base64,`).FindAllStringIndex(dom, -1))
	for _, area := range regexp.MustCompile(`class="[^"]*(output_subarea|jp-OutputArea-output)[^"]*"`).FindAllStringIndex(dom, -1) {
		// The area's content up to the next output area.
		rest := dom[area[1]:]
		if next := regexp.MustCompile(`class="[^"]*(output_subarea|jp-OutputArea-output)[^"]*"`).FindStringIndex(rest); next != nil {
			rest = rest[:next[0]]
		}
		svg += len(svgTag.FindAllStringIndex(rest, -1))
	}
	return png, svg
}

// tool returns the path of a program, looking first at the Debian path.
func tool(t *testing.T, debian, name string) string {
	t.Helper()
	if _, err := os.Stat(debian); err == nil {
		return debian
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	msg := fmt.Sprintf("%s not found (Debian: apt-get install %s)", name, map[string]string{
		"chromium": "chromium", "jupyter": "jupyter-notebook jupyter-nbconvert"}[name])
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg + "; skipping the browser test")
	return ""
}

// groupCmd is a command in its own process group, killed as a group when ctx
// ends or the test does.
func groupCmd(ctx context.Context, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

func TestFiguresRenderUntrusted(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the browser test")
	}
	chromium := tool(t, "/usr/bin/chromium", "chromium")
	jupyter := tool(t, "/usr/bin/jupyter", "jupyter")

	// The notebooks, copied: the fixtures under their own names.
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "nb")
	chapter, err := filepath.Glob(filepath.Join("..", "*.ipynb"))
	if err != nil || len(chapter) == 0 {
		t.Fatalf("no notebooks (%v)", err)
	}
	fixtures := []string{"testdata/figure_png.ipynb", "testdata/figure_svg_html.ipynb"}
	counts := map[string]figureCount{}
	migrated := false // some chapter notebook holds an image/png figure
	for _, src := range append(chapter, fixtures...) {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(src)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if counts[name], err = countFigures(src); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(src, "testdata/") && counts[name].png > 0 {
			migrated = true
		}
	}

	// A Jupyter that has never seen these notebooks: fresh home, data (trust
	// database), config and runtime directories.
	env := []string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}
	for _, v := range []string{"HOME", "JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"} {
		d := filepath.Join(tmp, strings.ToLower(v))
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		env = append(env, v+"="+d)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	url := startJupyter(t, ctx, env, jupyter, dir)

	problems := map[string][]string{}
	for name, want := range counts {
		pctx, pcancel := context.WithTimeout(ctx, browserWait)
		cmd := groupCmd(pctx, env, chromium, "--headless", "--no-sandbox", "--disable-gpu",
			"--no-first-run", "--disable-extensions", "--user-data-dir="+filepath.Join(tmp, "chromium"),
			"--virtual-time-budget=20000", "--dump-dom", url+"notebooks/"+name)
		var dom, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &dom, &stderr
		err := cmd.Run()
		pcancel()
		if err != nil {
			t.Fatalf("%s: chromium: %v (%s)", name, err, lastLine(stderr.String()))
		}
		if !strings.Contains(dom.String(), `id="notebook"`) && !strings.Contains(dom.String(), "jp-Notebook") {
			t.Fatalf("%s: the page did not load as a notebook (%d bytes of DOM)", name, dom.Len())
		}
		png, svg := renderedFigures(dom.String())
		t.Logf("%s: untrusted in the notebook UI: %d of %d image/png figures render; %d old-form (SVG) figures, %d inline SVG rendered",
			name, png, want.png, want.old, svg)
		if png < want.png {
			problems[name] = append(problems[name], fmt.Sprintf("%d of %d image/png figures render untrusted", png, want.png))
		}
		if want.old > 0 {
			problems[name] = append(problems[name], fmt.Sprintf(
				"%d figures are SVG only (gonbui.DisplaySVG), %d render untrusted: display them with chart/nbdisplay.Display",
				want.old, min(svg, want.old)))
		}
	}

	// nbconvert's HTML holds every image/png figure.
	html := filepath.Join(tmp, "html")
	nctx, ncancel := context.WithTimeout(ctx, 3*browserWait)
	defer ncancel()
	args := []string{"nbconvert", "--to", "html", "--output-dir", html}
	for name := range counts {
		args = append(args, filepath.Join(dir, name))
	}
	if out, err := groupCmd(nctx, env, jupyter, args...).CombinedOutput(); err != nil {
		t.Fatalf("jupyter nbconvert --to html: %v\n%s", err, out)
	}
	for name, want := range counts {
		b, err := os.ReadFile(filepath.Join(html, strings.TrimSuffix(name, ".ipynb")+".html"))
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(b), `src="data:image/png;base64,`); got < want.png {
			problems[name] = append(problems[name], fmt.Sprintf("nbconvert --to html holds %d of %d image/png figures", got, want.png))
		}
	}

	// The fixtures: the new form renders, the old form is reported.
	if p := problems["figure_png.ipynb"]; len(p) > 0 {
		t.Errorf("testdata/figure_png.ipynb (chart/nbdisplay's form) should render untrusted: %s", strings.Join(p, "; "))
	}
	if p := problems["figure_svg_html.ipynb"]; len(p) == 0 || !strings.Contains(strings.Join(p, ";"), "SVG only") {
		t.Errorf("testdata/figure_svg_html.ipynb (gonbui.DisplaySVG's form) should be reported as not rendering untrusted; got %q", p)
	} else {
		t.Logf("testdata/figure_svg_html.ipynb reported as expected: %s", strings.Join(p, "; "))
	}
	for _, name := range chapter {
		p := problems[name]
		if len(p) == 0 {
			continue
		}
		if !migrated && counts[name].png == 0 && counts[name].old > 0 && len(p) == 1 {
			t.Logf("%s: %s (not failing: the chapter is not yet re-executed with chart/nbdisplay)", name, p[0])
			continue
		}
		t.Errorf("%s: %s", name, strings.Join(p, "; "))
	}
}

// startJupyter serves dir on 127.0.0.1 without a token or password and
// returns its base URL once it answers; the server's process group is killed
// when the test ends. It speaks Notebook 6's flags, or Notebook 7's (Jupyter
// Server) when that is what is installed.
func startJupyter(t *testing.T, ctx context.Context, env []string, jupyter, dir string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()

	app := "NotebookApp"
	vctx, vcancel := context.WithTimeout(ctx, browserWait)
	version, err := groupCmd(vctx, env, jupyter, "notebook", "--version").Output()
	vcancel()
	if err != nil {
		t.Fatalf("jupyter notebook --version: %v", err)
	}
	if v := strings.TrimSpace(string(version)); !strings.HasPrefix(v, "5.") && !strings.HasPrefix(v, "6.") {
		app = "ServerApp" // Notebook 7 runs on Jupyter Server
	}
	sctx, scancel := context.WithCancel(ctx)
	cmd := groupCmd(sctx, env, jupyter, "notebook", "--no-browser", "--allow-root",
		"--ip=127.0.0.1", fmt.Sprintf("--port=%d", port), "--"+app+".port_retries=0",
		"--"+app+".token=", "--"+app+".password=", fmt.Sprintf("--%s.%s=%s", app, map[bool]string{true: "notebook_dir", false: "root_dir"}[app == "NotebookApp"], dir))
	cmd.Dir = dir
	logf, err := os.Create(filepath.Join(filepath.Dir(dir), "jupyter.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); logf.Close(); close(exited) }()
	t.Cleanup(func() {
		scancel() // kills the server's process group
		<-exited
	})

	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	deadline := time.Now().Add(browserWait)
	for {
		resp, err := http.Get(url + "api/status")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("jupyter notebook exited (%v):\n%s", waitErr, log)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("jupyter notebook did not answer on %s within %v:\n%s", url, browserWait, log)
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatal(ctx.Err())
		}
	}
}
