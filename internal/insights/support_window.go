package insights

import (
	"fmt"
	"math"
	"time"

	"github.com/ladder-eks/ladder/internal/catalog"
	"github.com/ladder-eks/ladder/internal/kubeversion"
)

func init() { Register(supportWindow{}) }

// EKS control-plane prices (eks-data.md §1b: "extended support is $0.60
// per cluster-hour in total ($0.10 standard + $0.50 surcharge), from the
// April 2024 billing cycle ... Standard support stays $0.10 per
// cluster-hour"). Extended billing starts at 00:00 UTC on the
// end-of-standard-support date.
const (
	standardPerHour  = 0.10
	extendedPerHour  = 0.60
	surchargePerHour = extendedPerHour - standardPerHour
	hoursPerMonth    = 730 // 8,760 hours / 12
	// supportSoon is how close an end of standard support must be to be
	// reported while still in standard support.
	supportSoon = 90 * 24 * time.Hour
)

// supportWindow reports where the current and the target minor stand in
// the EKS release calendar (internal/catalog eks-calendar.csv, eks-data.md
// §1b) at Input.Now (today, or --now): extended support and what it costs,
// the end of standard support when it is near, and minors past extended
// support — EKS then upgrades the control plane by itself (semantics.md
// §E) — or not on EKS at all.
type supportWindow struct{}

func (supportWindow) Info() Info {
	return Info{
		ID:    "support-window",
		Title: "EKS standard and extended support of the current and target versions",
		Help: "Standard support lasts 14 months from a minor's EKS release, extended support 12 more, billed at $0.60 instead of $0.10 per cluster-hour from 00:00 UTC on the end-of-standard-support date; " +
			"after extended support EKS upgrades the control plane by itself. Dates are Ladder's embedded EKS calendar, evaluated at --now (default: today). " +
			"WARNING for a minor in extended support or within 90 days of it (with the cost); ERROR for a minor past extended support or not available on EKS.",
		Needs: NeedsCurrent,
	}
}

func (supportWindow) Run(in *Input) []Finding {
	var out []Finding
	if f, ok := supportFinding(in, in.Current, true); ok {
		out = append(out, f)
	}
	if in.Target != in.Current {
		if f, ok := supportFinding(in, in.Target, false); ok {
			out = append(out, f)
		}
	}
	return out
}

func supportFinding(in *Input, minor kubeversion.Minor, current bool) (Finding, bool) {
	now := in.Now
	role := "the target"
	if current {
		role = "the control plane's"
	}
	mk := func(sev Severity, msg, rec string) (Finding, bool) {
		if in.Cluster != nil {
			return in.Cluster.finding(sev, "Cluster", "", in.Cluster.Name, msg, rec), true
		}
		return Finding{Severity: sev, Message: msg, Recommendation: rec}, true
	}
	rel, ok := catalog.LookupRelease(minor.String())
	if !ok {
		return mk(Warning, fmt.Sprintf("Kubernetes %s (%s version) is not in Ladder's EKS calendar (as of %s): its support dates are unknown", minor, role, catalog.DataDate),
			fmt.Sprintf("Check aws eks describe-cluster-versions --cluster-versions %s.", minor))
	}
	status, err := catalog.SupportStatus(minor.String(), now)
	if err != nil {
		return mk(Error, fmt.Sprintf("Kubernetes %s (%s version) is not available on EKS on %s: it was released on EKS on %s", minor, role, day(now), day(rel.EKSRelease)),
			"Choose a minor EKS offers today (aws eks describe-cluster-versions).")
	}
	nearest := oldestStandard(now)
	switch status {
	case catalog.StatusUnsupported:
		msg := fmt.Sprintf("Kubernetes %s, %s version, is past extended support: it ended on %s (%s ago)", minor, role, day(rel.EndOfExtendedSupport), days(now.Sub(rel.EndOfExtendedSupport)))
		if current {
			msg += "; EKS may upgrade the control plane to the oldest supported minor at any time, and does not upgrade nodes or add-ons with it"
		} else {
			msg += "; EKS no longer offers it"
		}
		return mk(Error, msg, fmt.Sprintf("Upgrade, one minor at a time, to a minor in standard support (%s is until %s).", nearest.Minor, day(nearest.EndOfStandardSupport)))
	case catalog.StatusExtendedSupport:
		left := rel.EndOfExtendedSupport.Sub(now)
		msg := fmt.Sprintf("Kubernetes %s, %s version, has been in extended support since %s (%s ago) and until %s (%s from now): the control plane costs $%.2f per cluster-hour instead of $%.2f, $%.2f more — about $%s a month",
			minor, role, day(rel.EndOfStandardSupport), days(now.Sub(rel.EndOfStandardSupport)), day(rel.EndOfExtendedSupport), days(left),
			extendedPerHour, standardPerHour, surchargePerHour, money(surchargePerHour*hoursPerMonth))
		if current {
			msg += fmt.Sprintf(", $%s until extended support ends", money(surchargePerHour*math.Ceil(left.Hours())))
			return mk(Warning, msg, fmt.Sprintf("Upgrade past %s before %s; %s, the oldest minor in standard support, is until %s.", minor, day(rel.EndOfExtendedSupport), nearest.Minor, day(nearest.EndOfStandardSupport)))
		}
		return mk(Warning, msg+"; the upgrade to it does not end the surcharge",
			fmt.Sprintf("Plan the hops on to %s (standard support until %s) to stop paying for extended support.", nearest.Minor, day(nearest.EndOfStandardSupport)))
	default:
		left := rel.EndOfStandardSupport.Sub(now)
		if left > supportSoon {
			return Finding{}, false
		}
		return mk(Warning, fmt.Sprintf("Kubernetes %s, %s version, leaves standard support on %s (%s from now): from then the control plane costs $%.2f per cluster-hour instead of $%.2f — about $%s a month more — until %s",
			minor, role, day(rel.EndOfStandardSupport), days(left), extendedPerHour, standardPerHour, money(surchargePerHour*hoursPerMonth), day(rel.EndOfExtendedSupport)),
			fmt.Sprintf("Upgrade past %s before %s to avoid the extended-support charge.", minor, day(rel.EndOfStandardSupport)))
	}
}

// oldestStandard is the oldest minor in standard support at an instant:
// the nearest hop that ends the extended-support surcharge.
func oldestStandard(now time.Time) catalog.Release {
	rels := catalog.Releases()
	for _, r := range rels {
		if s, err := catalog.SupportStatus(r.Minor, now); err == nil && s == catalog.StatusStandardSupport {
			return r
		}
	}
	return rels[len(rels)-1]
}

func day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// days prints a duration in whole days, rounded down: "115 days".
func days(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	return plural(int(d/(24*time.Hour)), "day")
}

// money prints dollars with thousands separators and no cents: "1,380".
func money(v float64) string {
	n := int64(math.Round(v))
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
