// Package telemetrytest reads a Telemetry's metrics as Prometheus would,
// so that the tests of telemetry itself and of the HTTP layer that it
// observes check the same text by the same names.
package telemetrytest

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/taskchat/taskchat/internal/telemetry"
)

// Scrape reads tel's metrics as Prometheus would, by series: the name
// with its labels as the text format writes them (sorted by name), as
// Series names them. It fails tb when the handler does not answer 200 or
// writes a line that is not a series and its value.
func Scrape(tb testing.TB, tel *telemetry.Telemetry) map[string]float64 {
	tb.Helper()
	w := httptest.NewRecorder()
	tel.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	if w.Code != http.StatusOK {
		tb.Fatalf("scrape = %d", w.Code)
	}
	series := map[string]float64{}
	sc := bufio.NewScanner(w.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			tb.Fatalf("bad metric line %q", line)
		}
		series[line[:i]] = v
	}
	return series
}

// Series names one series as Scrape keys it: labels are name, value pairs,
// in any order.
func Series(name string, labels ...string) string {
	var pairs []string
	for i := 0; i < len(labels); i += 2 {
		pairs = append(pairs, labels[i]+`="`+labels[i+1]+`"`)
	}
	slices.Sort(pairs)
	return name + "{" + strings.Join(pairs, ",") + "}"
}
