package htmlreport_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/ladder-eks/ladder/internal/htmlreport"
	"github.com/ladder-eks/ladder/internal/rehearse"
	"github.com/ladder-eks/ladder/internal/report"
	"github.com/ladder-eks/ladder/internal/scenario"
	"github.com/ladder-eks/ladder/internal/timeline"
)

// The embedded library is the one scripts/vendor-charts.sh vendored.
func TestVendoredChartsMatchChecksum(t *testing.T) {
	lib, err := os.ReadFile("assets/echarts.min.js")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile("assets/echarts.min.js.sha256")
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := strings.Cut(string(sum), " ")
	got := sha256.Sum256(lib)
	if hex.EncodeToString(got[:]) != want {
		t.Fatalf("assets/echarts.min.js has sha256 %x, echarts.min.js.sha256 says %s: run scripts/vendor-charts.sh", got, want)
	}
	if !bytes.Contains(page(t, "karpenter-drift"), lib) {
		t.Errorf("the page does not carry assets/echarts.min.js whole")
	}
}

func rehearsal(t *testing.T, name string) (*report.Report, *timeline.Timeline) {
	t.Helper()
	sc, err := scenario.LoadBuiltin(name)
	if err != nil {
		t.Fatal(err)
	}
	rep, tl, err := rehearse.RunTimeline(sc, rehearse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep, tl
}

func page(t *testing.T, name string) []byte {
	t.Helper()
	rep, tl := rehearsal(t, name)
	var buf bytes.Buffer
	if err := htmlreport.Write(&buf, rep, tl); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Same scenario and seed, same bytes.
func TestPageIsDeterministic(t *testing.T) {
	a, b := page(t, "workshop"), page(t, "workshop")
	if !bytes.Equal(a, b) {
		t.Fatal("two rehearsals of the workshop wrote different pages")
	}
}

// xmlNamespaces are the URLs the library holds as XML namespace names for
// the SVG it can draw: identifiers, never fetched.
var xmlNamespaces = map[string]bool{
	"http://www.w3.org/2000/svg": true, "http://www.w3.org/1999/xlink": true,
	"http://www.w3.org/2000/xmlns/": true, "http://www.w3.org/XML/1998/namespace": true,
}

var url = regexp.MustCompile(`https?://[^\s"'<>)\\]*`)

// The page opens offline: no address in it but in the library's comments
// and its XML namespace names.
func TestPageHasNoExternalURL(t *testing.T) {
	html := string(page(t, "workshop"))
	for _, loc := range url.FindAllStringIndex(html, -1) {
		u := html[loc[0]:loc[1]]
		before := html[:loc[0]]
		inComment := strings.LastIndex(before, "/*") > strings.LastIndex(before, "*/")
		if !inComment && !xmlNamespaces[u] {
			t.Errorf("address %q outside a comment of the library: %q", u, html[max(loc[0]-80, 0):loc[0]])
		}
	}
	// Around the library, nothing the browser would load: no src, no
	// link, no CSS import or url().
	lib, err := os.ReadFile("assets/echarts.min.js")
	if err != nil {
		t.Fatal(err)
	}
	own := strings.Replace(html, string(lib), "", 1)
	for _, attr := range []string{` src=`, `<link`, `@import`, `url(`, `fetch(`, `XMLHttpRequest`} {
		if strings.Contains(own, attr) {
			t.Errorf("the page loads something: it contains %q", attr)
		}
	}
}

// The workshop's page: the status line and tables of the text report, the
// charts' places, the data the script reads, and its size.
func TestWorkshopPage(t *testing.T) {
	rep, tl := rehearsal(t, "workshop")
	var buf bytes.Buffer
	if err := htmlreport.Write(&buf, rep, tl); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	firstLine, _, _ := strings.Cut(text.String(), "\n")
	status := regexp.MustCompile(`<p id="status-line"[^>]*>(.*?)</p>`).FindStringSubmatch(html)
	if status == nil {
		t.Fatal("no status line")
	}
	// The text report's first line, with the status in bold and the hops added.
	plain := strings.NewReplacer("<strong>", "", "</strong>", "").Replace(status[1])
	if !strings.HasPrefix(plain, firstLine) {
		t.Errorf("status line %q, want the text report's %q", plain, firstLine)
	}
	count := func(pattern string) int { return len(regexp.MustCompile(pattern).FindAllString(html, -1)) }
	for _, c := range []struct {
		what      string
		got, want int
	}{
		{"step rows", count(`<tr><td>1\.31</td><td>(pre-checks|control-plane|addon|node-group)</td>`), len(rep.Phases)},
		{"group charts", count(`data-chart="group"`), len(tl.Groups)},
		{"workload charts", count(`data-chart="workload"`), len(rep.Workloads)},
		{"NodePool charts", count(`data-chart="nodepool"`), 1},
		{"node rows", count(`<tr><td>ip-[0-9-]+\.us-west-2\.compute\.internal</td><td>Ready</td>|<tr><td>fargate-ip-`), len(rep.Nodes)},
		{"blocked rows", strings.Count(between(html, `<table id="blocked">`, `</table>`), "<tr><td>"), len(rep.Blocked)},
		{"outage rows", strings.Count(between(html, `<caption>Probe outages</caption>`, `</table>`), "<tr><td>"), len(rep.Probe.Outages)},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	for _, want := range []string{
		`<p id="probe-line">Probe ui: 2m19s of 36m31s failed (93.66% of requests succeeded).</p>`,
		`<h3 id="group-custom-Y">custom-Y <span class="sub">(managed)</span></h3>`,
		`<nav aria-label="Sections">`, `<a class="skip" href="#main">`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	js := between(html, `<script type="application/json" id="ladder-data">`, `</script>`)
	var data htmlreport.Data
	if err := json.Unmarshal([]byte(js), &data); err != nil {
		t.Fatalf("the page's data: %v", err)
	}
	if len(data.Timeline.Nodes) != tl.NodesSeen || data.Report.Scenario != "workshop" || len(data.Report.Phases) != len(rep.Phases) {
		t.Errorf("the page's data: %d node lives of %d, scenario %q, %d phases", len(data.Timeline.Nodes), tl.NodesSeen, data.Report.Scenario, len(data.Report.Phases))
	}
	const limit = 2 << 20
	if len(html) > limit {
		t.Errorf("the workshop's page is %d bytes, over %d", len(html), limit)
	}
	t.Logf("workshop page: %d bytes (%d of them the charting library)", len(html), len(between(html, "<script>", "</script>")))
}

func between(s, from, to string) string {
	_, s, _ = strings.Cut(s, from)
	s, _, _ = strings.Cut(s, to)
	return s
}
