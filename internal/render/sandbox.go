package render

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A render runs in a process of its own: the running executable (the
// ladder binary, or a test binary) started again with childEnv set, which
// init below turns into the render's process before the program's own main
// runs. The parent sends the request on the child's standard input and
// reads the answer from its standard output, both gob-encoded; it kills the
// child when its time is up or when the answer grows over the output
// budget, and reads the child's fatal error (out of memory, stack
// overflow) from its standard error. The child bounds its own heap and
// stack. So no chart or kustomization, however hostile, can hang, crash or
// exhaust ladder itself: it costs at most its budget, is one Problem, and
// the walk goes on.
const (
	childEnv      = "LADDER_RENDER_CHILD"
	childProtocol = "1" // bump when request or answer change
)

// fd2 is the render process's own standard error, which the parent
// reads; os.Stderr is captured during a render (captureStderr).
var fd2 = os.Stderr

func init() {
	if v, ok := os.LookupEnv(childEnv); ok {
		os.Exit(serveChild(v, os.Stdin, os.Stdout))
	}
}

// request is what the parent asks the child to render.
type request struct {
	Kind DirKind
	Dir  string
	// WorkDir is the caller's working directory at the request: Dir and
	// the values files may be relative to it, and a render process kept
	// for the next render may have been started from another one.
	WorkDir string
	Helm    HelmOptions
	Budget  budget
}

// answer is the child's reply.
type answer struct {
	Result   Result
	Err      string // the error return: the caller's own mistake
	Warnings []byte // what the render printed to standard error (kustomize's warnings)
}

// Exit codes of the child that are not a crash.
const (
	exitBadRequest = 3
	exitMemory     = 4 // the heap passed the memory budget
	exitTime       = 5 // the render used its processor time
)

// Messages of the Go runtime's fatal errors, written to the child's file
// descriptor 2 (runtime/stack.go newstack, runtime/malloc.go).
const (
	fatalStack  = "goroutine stack exceeds"
	fatalMemory = "out of memory"
)

// sandboxed runs req in a render process under budgets: an idle one
// started for the same budgets, or a new one. A process that answered is
// kept for the next render (starting one costs more than most renders:
// see docs/check-render.md) and ends after idleWorker without work; one
// that ran out of its budget is killed.
func sandboxed(req request) (answer, *budgetExceeded, error) {
	req.Budget = budgets
	wd, err := os.Getwd()
	if err != nil {
		return answer{}, nil, fmt.Errorf("rendering %s: %w", req.Dir, err)
	}
	req.WorkDir = wd
	w := idleWorkers.take(req.Budget)
	if w == nil {
		if w, err = startWorker(req.Budget); err != nil {
			return answer{}, nil, fmt.Errorf("ladder cannot start itself again to render %s: %w", req.Dir, err)
		}
	}
	a, over, reusable := w.do(req)
	if over != nil {
		return answer{}, over, nil
	}
	if reusable {
		idleWorkers.put(w)
	}
	return a, nil, nil
}

// idleWorker is how long a render process waits for its next render.
const idleWorker = 5 * time.Second

// worker is a render process and the parent's ends of its pipes.
type worker struct {
	budget  budget
	cmd     *exec.Cmd
	stdin   *os.File
	enc     *gob.Encoder
	out     *budgetReader
	dec     *gob.Decoder
	stderr  *headBuffer
	exited  chan struct{} // closed when the process has ended
	waitErr error
	idle    *time.Timer
}

func startWorker(b budget) (*worker, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	w := &worker{budget: b, stdin: inW, stderr: &headBuffer{max: 8 << 10}, exited: make(chan struct{})}
	w.cmd = exec.Command(exe)
	w.cmd.Env = append(os.Environ(), childEnv+"="+childProtocol)
	w.cmd.Stdin, w.cmd.Stdout, w.cmd.Stderr = inR, outW, w.stderr
	err = w.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("%s: %w", exe, err)
	}
	go func() {
		w.waitErr = w.cmd.Wait()
		outR.Close()
		close(w.exited)
	}()
	w.enc = gob.NewEncoder(inW)
	w.out = &budgetReader{r: outR}
	w.dec = gob.NewDecoder(w.out)
	return w, nil
}

// do sends req and reads the answer within the budgets; on any failure it
// kills the process and says which budget it ran out of. reusable is false
// when the process was killed as the answer came.
func (w *worker) do(req request) (a answer, over *budgetExceeded, reusable bool) {
	var timedOut atomic.Bool
	timer := time.AfterFunc(wallClock(w.budget), func() {
		timedOut.Store(true)
		w.kill()
	})
	w.out.reset(w.budget.Output)
	err := w.enc.Encode(req)
	if err == nil {
		err = w.dec.Decode(&a)
	}
	if err == nil {
		return a, nil, timer.Stop()
	}
	timer.Stop()
	w.kill()
	<-w.exited
	over = &budgetExceeded{budget: w.budget}
	var exit *exec.ExitError
	code := -1
	if errors.As(w.waitErr, &exit) {
		code = exit.ExitCode()
	}
	msg := w.stderr.String()
	switch {
	case w.out.over:
		over.what = budgetOutput
	case timedOut.Load():
		over.what = budgetWallClock
	case code == exitTime:
		over.what = budgetTime
	case code == exitMemory || strings.Contains(msg, fatalMemory):
		over.what = budgetMemory
	case strings.Contains(msg, fatalStack):
		over.what = budgetStack
	default:
		over.what, over.detail = budgetCrash, firstLine(msg, err)
	}
	return answer{}, over, false
}

func (w *worker) kill() {
	_ = w.cmd.Process.Kill()
	_ = w.stdin.Close()
}

// workerPool holds the render processes waiting for work.
type workerPool struct {
	mu   sync.Mutex
	idle []*worker
}

var idleWorkers workerPool

// take returns an idle process started for budget b, or nil.
func (p *workerPool) take(b budget) *worker {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, w := range p.idle {
		if w.budget == b && w.idle.Stop() {
			p.idle = slices.Delete(p.idle, i, i+1)
			return w
		}
	}
	return nil
}

// put keeps w for the next render, for idleWorker; then its standard input
// is closed, and it ends.
func (p *workerPool) put(w *worker) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idle = append(p.idle, w)
	w.idle = time.AfterFunc(idleWorker, func() {
		p.mu.Lock()
		if i := slices.Index(p.idle, w); i >= 0 {
			p.idle = slices.Delete(p.idle, i, i+1)
		}
		p.mu.Unlock()
		_ = w.stdin.Close()
	})
}

// budgetReader reads a render process's answers, failing one that grows
// over the output budget.
type budgetReader struct {
	r    io.Reader
	left int64
	over bool
}

var errOverOutput = errors.New("answer over the output budget")

func (b *budgetReader) reset(limit int64) { b.left = limit }

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		b.over = true
		return 0, errOverOutput
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// wallClock is how long the parent waits for the child's answer: three
// times its processor-time budget.
func wallClock(b budget) time.Duration { return 3 * b.Time }

// firstLine is the first line of the child's standard error that says
// something, or the wait error.
func firstLine(stderr string, waitErr error) string {
	for _, l := range strings.Split(stderr, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return oneLine(l)
		}
	}
	return waitErr.Error()
}

// serveChild is the render's process: it renders one request after
// another, each under its budget, until its standard input ends.
func serveChild(protocol string, in io.Reader, out io.Writer) int {
	if protocol != childProtocol {
		fmt.Fprintf(os.Stderr, "ladder render process: protocol %q, want %q\n", protocol, childProtocol)
		return exitBadRequest
	}
	dec, enc := gob.NewDecoder(in), gob.NewEncoder(out)
	var w *watchdog
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return 0
			}
			fmt.Fprintf(os.Stderr, "ladder render process: bad request: %v\n", err)
			return exitBadRequest
		}
		if w == nil {
			// One process serves one set of budgets (workerPool.take).
			w = limitChild(req.Budget)
		}
		w.start(req.Budget.Time)
		a := serve(req)
		w.stop()
		if err := enc.Encode(a); err != nil {
			fmt.Fprintf(fd2, "ladder render process: %v\n", err)
			return 1
		}
		// The next render starts from a clean heap.
		runtime.GC()
	}
}

// serve renders one request.
func serve(req request) answer {
	var a answer
	if req.WorkDir != "" {
		if err := os.Chdir(req.WorkDir); err != nil {
			a.Err = fmt.Sprintf("rendering %s: %v", req.Dir, err)
			return a
		}
	}
	warnings := captureStderr()
	var err error
	switch req.Kind {
	case Chart:
		a.Result, err = renderHelm(req.Dir, req.Helm)
	case Kustomization:
		a.Result, err = buildKustomization(req.Dir)
	default:
		err = fmt.Errorf("%s: not a chart or a kustomization", req.Dir)
	}
	if err != nil {
		a.Err = err.Error()
	}
	a.Warnings = warnings()
	return a
}

// limitChild applies the memory and stack budgets to this process: the
// runtime's soft memory limit, so the collector works hard before the
// budget is reached; the stack limit, past which the runtime stops with
// "goroutine stack exceeds"; where the system has one, a hard limit on the
// address space (limitAddressSpace); and a watchdog that exits when the
// heap passes the budget anyway, or a render its processor time.
func limitChild(b budget) *watchdog {
	runtime.GOMAXPROCS(gomaxprocsChild)
	debug.SetMemoryLimit(b.Memory * 3 / 4)
	debug.SetMaxStack(b.Stack)
	limitAddressSpace(b.Memory)
	w := &watchdog{memory: b.Memory}
	go w.run()
	return w
}

// watchdog ends the render's process when its heap passes the memory
// budget, or when the render under way has used its processor time. It
// looks every millisecond, on a processor of its own: the runtime preempts
// a template loop for it (asynchronous preemption).
type watchdog struct {
	memory   int64
	deadline atomic.Int64 // processor time (ns) at which the render under way is stopped; 0 when idle
}

// start gives the next render d of processor time from now.
func (w *watchdog) start(d time.Duration) { w.deadline.Store(int64(processorTime() + d)) }

func (w *watchdog) stop() { w.deadline.Store(0) }

// heapMetrics are the heap's objects (live, and dead not yet swept) and the
// goroutine stacks: what a render grows.
var heapMetrics = []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/stacks:bytes"}

func (w *watchdog) run() {
	samples := make([]metrics.Sample, len(heapMetrics))
	for i, m := range heapMetrics {
		samples[i].Name = m
	}
	for {
		metrics.Read(samples)
		var used uint64
		for _, s := range samples {
			if s.Value.Kind() == metrics.KindUint64 {
				used += s.Value.Uint64()
			}
		}
		if used > uint64(w.memory) {
			fmt.Fprintf(fd2, "ladder render process: heap %d bytes, over the %d-byte budget\n", used, w.memory)
			os.Exit(exitMemory)
		}
		if d := w.deadline.Load(); d != 0 && int64(processorTime()) > d {
			fmt.Fprintf(fd2, "ladder render process: over the processor-time budget\n")
			os.Exit(exitTime)
		}
		time.Sleep(time.Millisecond)
	}
}

// captureStderr sends what the render prints to standard error (kustomize
// writes its warnings to os.Stderr and the log package) or to os.Stdout
// into a buffer, which the parent prints; file descriptor 1 is left to the
// answer, and 2 to the runtime's fatal errors, which the parent reads. The returned function stops the
// capture and returns what was printed.
func captureStderr() func() []byte {
	r, w, err := os.Pipe()
	if err != nil {
		return func() []byte { return nil }
	}
	buf := &headBuffer{max: 64 << 10}
	var done sync.WaitGroup
	done.Go(func() { _, _ = io.Copy(buf, r) })
	os.Stderr, os.Stdout = w, w
	log.SetOutput(w)
	return func() []byte {
		_ = w.Close()
		done.Wait()
		return buf.Bytes()
	}
}

// headBuffer keeps the first max bytes written to it and discards the
// rest: a fatal error's message comes first, its goroutine dump after.
type headBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - h.buf.Len(); room > 0 {
		h.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (h *headBuffer) String() string { return string(h.Bytes()) }

func (h *headBuffer) Bytes() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return bytes.Clone(h.buf.Bytes())
}

// What a render ran out of.
const (
	budgetTime = iota + 1 // processor time
	budgetWallClock
	budgetOutput
	budgetMemory
	budgetStack
	budgetCrash // the process died of something else
)

// budgetExceeded is a render that did not answer within its budget.
type budgetExceeded struct {
	what   int
	budget budget
	detail string
}

// problem is the finding for a render of dir (a chart or a kustomization,
// whose file is file) that ran out of its budget; tool is "helm template"
// or "kubectl kustomize".
func (e *budgetExceeded) problem(file, dir, tool string) Problem {
	p := Problem{File: file, Line: 1}
	switch e.what {
	case budgetTime:
		p.Message = fmt.Sprintf("%s stopped: it computed for longer than ladder's %s time budget for one render", tool, e.budget.Time)
		p.Fix = fmt.Sprintf("make `%s %s` finish in seconds (a range over a huge list, or nested ranges, are the usual cause)", tool, dir)
	case budgetWallClock:
		p.Message = fmt.Sprintf("%s stopped: it did not finish within %s, three times ladder's %s time budget for one render", tool, wallClock(e.budget), e.budget.Time)
		p.Fix = fmt.Sprintf("make `%s %s` finish in seconds (a range over a huge list, or nested ranges, are the usual cause; so is a machine too busy to run it)", tool, dir)
	case budgetOutput:
		p.Message = fmt.Sprintf("%s stopped: it rendered over ladder's %d MiB budget of output for one render", tool, e.budget.Output>>20)
		p.Fix = fmt.Sprintf("make `%s %s` print less (a range that repeats an object without end is the usual cause)", tool, dir)
	case budgetMemory:
		p.Message = fmt.Sprintf("%s stopped: it used over ladder's %d MiB memory budget for one render", tool, e.budget.Memory>>20)
		p.Fix = fmt.Sprintf("make `%s %s` use less memory (a huge list such as `until 100000000`, or a string grown without end, is the usual cause)", tool, dir)
	case budgetStack:
		p.Message = fmt.Sprintf("%s stopped: its templates recursed deeper than ladder's %d MiB stack budget for one render", tool, e.budget.Stack>>20)
		p.Fix = "end the recursion: a `tpl` or `include` that calls itself, directly or through values that call `tpl`, is the usual cause"
	default:
		p.Message = fmt.Sprintf("%s stopped: ladder's render process failed: %s", tool, e.detail)
		p.Fix = fmt.Sprintf("make `%s %s` succeed", tool, dir)
	}
	return p
}

// gomaxprocsChild is the processors a render's process uses: the render
// itself is one goroutine; the second runs the collector and the heap
// watchdog beside it.
const gomaxprocsChild = 2
