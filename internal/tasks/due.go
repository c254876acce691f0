package tasks

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Priority is how much a task matters to its person: high, medium or low;
// "" is none.
type Priority string

// The priorities, in the order a list sorted by priority shows them.
const (
	PriorityHigh   Priority = "high"
	PriorityMedium Priority = "medium"
	PriorityLow    Priority = "low"
)

// Priorities are the priorities a task may have, highest first.
var Priorities = []Priority{PriorityHigh, PriorityMedium, PriorityLow}

// ParsePriority reads a priority as a client sends it, in any case.
func ParsePriority(s string) (Priority, error) {
	p := Priority(strings.ToLower(strings.TrimSpace(s)))
	for _, known := range Priorities {
		if p == known {
			return p, nil
		}
	}
	return "", Invalid("priority", `must be "high", "medium" or "low"`)
}

// Rank is the priority as the store keeps it: 1 for high to 3 for low, 0
// for none.
func (p Priority) Rank() int {
	for i, known := range Priorities {
		if p == known {
			return i + 1
		}
	}
	return 0
}

// PriorityOfRank is the priority a store's rank stands for.
func PriorityOfRank(rank int) Priority {
	if rank < 1 || rank > len(Priorities) {
		return ""
	}
	return Priorities[rank-1]
}

// Due is when a task is due: a day, or a day and a time, as its person
// meant it, in the time zone they meant it in.
type Due struct {
	// Date is the day, "2006-01-02", in Zone.
	Date string
	// At is the instant, when a time was given; nil for the whole day.
	At *time.Time
	// Zone is the IANA name of the zone Date (and At's wall clock) is in.
	Zone string
	// StoredBy and StoredText are By and String as they were written, when
	// the due date was read back from a store: written once, by this
	// service's zone database, they are what the task is sorted, filtered
	// and shown by from then on, whatever a later zone database says.
	StoredBy   time.Time
	StoredText string
}

// The layouts of a due date as written and shown.
const (
	DateLayout      = "2006-01-02"
	localTimeLayout = "2006-01-02T15:04:05"
	shortTimeLayout = "2006-01-02T15:04"
)

// By is the last instant the task is due in: its time, or the last
// microsecond of its day. Every due date is then one instant: a day's
// tasks sort after those due at a time of that day, a filter from one
// instant to another holds a day's tasks when it holds the whole day, and
// a task is overdue once By has passed.
func (d Due) By() time.Time {
	if !d.StoredBy.IsZero() {
		return d.StoredBy
	}
	if d.At != nil {
		return *d.At
	}
	day, _ := time.Parse(DateLayout, d.Date)
	return dayStart(day.AddDate(0, 0, 1), zone(d.Zone)).Add(-time.Microsecond)
}

// dayStart is the first instant of day's calendar date (its year, month
// and day) in loc: midnight, or, where the clocks jump over midnight
// (Havana in March, the Azores), the first time the day has; where
// midnight comes twice, the first.
func dayStart(day time.Time, loc *time.Location) time.Time {
	y, m, d := day.Date()
	on := func(t time.Time) bool {
		ty, tm, td := t.In(loc).Date()
		return ty == y && tm == m && td == d
	}
	t := time.Date(y, m, d, 0, 0, 0, 0, loc)
	for i := 0; !on(t) && i < 24*60; i++ { // Go may give a time in the gap as the day before's
		t = t.Add(time.Minute)
	}
	for i := 0; on(t.Add(-time.Minute)) && i < 24*60; i++ {
		t = t.Add(-time.Minute)
	}
	return t
}

// Overdue reports whether the task, if still open, is late at now.
func (d Due) Overdue(now time.Time) bool { return now.After(d.By()) }

// String is the due date as the API shows it: the day, or the date and
// time with the zone's offset then ("2026-12-04T17:00:00+01:00").
func (d Due) String() string {
	if d.StoredText != "" {
		return d.StoredText
	}
	if d.At == nil {
		return d.Date
	}
	return d.At.In(zone(d.Zone)).Format(time.RFC3339)
}

// Time is the wall-clock time in Zone, "" for a whole day.
func (d Due) Time() string {
	if d.At == nil {
		return ""
	}
	return d.At.In(zone(d.Zone)).Format("15:04")
}

// Zone is the location named, UTC when the name is empty or not one (a
// zone the service accepted once and the system no longer knows).
func Zone(name string) *time.Location { return zone(name) }

func zone(name string) *time.Location {
	if loc, err := LoadZone(name); err == nil {
		return loc
	}
	return time.UTC
}

// LoadZone is the IANA time zone named, "UTC" when empty. The binary embeds
// the zone database (cmd/server imports time/tzdata), so every name works
// wherever it runs.
func LoadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if notAZone(name) {
		return nil, Invalid("time_zone", fmt.Sprintf("%q is not a place's time zone: use an IANA name such as Europe/Paris or America/New_York", name))
	}
	if loc, ok := zones.Load(name); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, Invalid("time_zone", fmt.Sprintf("%q is not an IANA time zone name such as Europe/Paris or America/New_York", name))
	}
	zones.Store(name, loc)
	return loc, nil
}

// zones are the zones loaded, by name: time.LoadLocation reads and parses
// the zone's file each time, and every turn of a user with a zone asks for
// it. The zone database has some 600 names, so this stays small.
var zones sync.Map

// notAZone reports whether name, which the zone database may hold, names
// no place: time.LoadLocation's "Local" and the machine's "localtime"
// (whatever the server's machine is), and the database's own files —
// "posixrules", "Factory", and the "posix/" and "right/" copies, the
// latter counting leap seconds, so that 17:00 there is 16:59:33 anywhere
// else.
func notAZone(name string) bool {
	switch strings.ToLower(name) {
	case "local", "localtime", "posixrules", "factory":
		return true
	case "cet", "eet", "met", "wet":
		// Zones to Go, fixed offsets to PostgreSQL and in many people's
		// reading: say which place.
		return true
	}
	return strings.HasPrefix(name, "posix/") || strings.HasPrefix(name, "right/")
}

// ParseDue reads a due date as a client writes it, for a user in zone
// loc: a day ("2026-12-04"), a date and time with an offset or Z
// ("2026-12-04T17:00:00+01:00", RFC 3339), or a date and time without one
// ("2026-12-04T17:00"), which is the user's wall clock. A date and time
// keeps its instant; its day is the day it is in the user's zone then.
func ParseDue(s string, loc *time.Location) (Due, error) { return parseDue("due", s, loc) }

func parseDue(field, s string, loc *time.Location) (Due, error) {
	s = strings.TrimSpace(s)
	if d, err := time.Parse(DateLayout, s); err == nil { // a calendar day, in no zone
		if d.Year() < 1900 || d.Year() > 9998 {
			return Due{}, Invalid(field, "must be a date from the year 1900 to 9998")
		}
		return Due{Date: d.Format(DateLayout), Zone: loc.String()}, nil
	}
	at, err := time.Parse(time.RFC3339, s)
	if err != nil {
		for _, layout := range []string{localTimeLayout, shortTimeLayout} {
			if at, err = time.ParseInLocation(layout, s, loc); err == nil {
				break
			}
		}
	}
	if err != nil {
		return Due{}, Invalid(field, fmt.Sprintf("must be a date such as 2026-12-04, or a date and time such as 2026-12-04T17:00:00+01:00 (got %q)", s))
	}
	if at.Year() < 1900 || at.Year() > 9998 {
		return Due{}, Invalid(field, "must be a date from the year 1900 to 9998")
	}
	at = at.UTC()
	return Due{Date: at.In(loc).Format(DateLayout), At: &at, Zone: loc.String()}, nil
}

// ParseDueRange reads the bounds of a due-date filter, each as ParseDue
// reads a due date ("" for none), into the instants a task's By must lie
// within: from after (a day from its start), up to before (a day through
// its end, so that "due before Friday" holds Friday's tasks; an instant
// excluded). A missing bound is the zero time.
func ParseDueRange(after, before string, loc *time.Location) (from, to time.Time, err error) {
	if after != "" {
		d, err := parseDue("due_after", after, loc)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		if from = d.By(); d.At == nil {
			day, _ := time.Parse(DateLayout, d.Date)
			from = dayStart(day, loc)
		}
	}
	if before != "" {
		d, err := parseDue("due_before", before, loc)
		if err != nil {
			return time.Time{}, time.Time{}, err
		}
		if to = d.By(); d.At == nil {
			to = d.By().Add(time.Microsecond)
		}
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return time.Time{}, time.Time{}, Invalid("due_before", "must be later than due_after")
	}
	return from, to, nil
}

// Field is an optional change to a field that may also be cleared: unset
// leaves the field alone; set with a nil Value clears it.
type Field[T any] struct {
	Set   bool
	Value *T
}

// SetTo is the change that sets the field to v.
func SetTo[T any](v T) Field[T] { return Field[T]{Set: true, Value: &v} }

// Clear is the change that clears the field.
func Clear[T any]() Field[T] { return Field[T]{Set: true} }

// Settings are a user's settings.
type Settings struct {
	// TimeZone is the IANA name of the zone the user's dates are read and
	// shown in.
	TimeZone  string
	UpdatedAt time.Time // zero until the user sets them
}

// DefaultSettings are a user's settings until they set some.
func DefaultSettings() Settings { return Settings{TimeZone: "UTC"} }

// SettingsStore keeps users' settings.
type SettingsStore interface {
	Settings(ctx context.Context, userID string) (Settings, error)
	SaveSettings(ctx context.Context, userID string, s Settings) (Settings, error)
}

// ValidSettings checks s as a client sent it: the time zone must be a
// place's, one the zone database knows; it is kept as written (trimmed).
func ValidSettings(s Settings) (Settings, error) {
	name := strings.TrimSpace(s.TimeZone)
	if len(name) > 64 {
		return Settings{}, Invalid("time_zone", "must be an IANA time zone name, at most 64 characters")
	}
	if name == "" {
		return Settings{}, Invalid("time_zone", "is required: an IANA time zone name such as Europe/Paris")
	}
	loc, err := LoadZone(name)
	if err != nil {
		return Settings{}, err
	}
	return Settings{TimeZone: loc.String()}, nil
}
