package results

import (
	"slices"

	"github.com/taskchat/taskchat/internal/agent/offline/grammar"
	"github.com/taskchat/taskchat/internal/agent/offline/slots"
)

// MatchTasks returns the tasks whose title holds every word of the name;
// failing that, when loose (a name of what was done), those whose title
// words are all in it: "I paid the electricity bill" finds "Pay bill",
// where "delete the gym bag" must not find "Gym".
func MatchTasks(tasks []Task, words []string, loose bool) []Task {
	query := slots.Stems(words)
	if len(query) == 0 {
		return nil
	}
	out := TasksWhere(tasks, func(t Task) bool { return slots.ContainsAll(slots.TitleStems(t.Title), query) })
	if len(out) > 0 || !loose {
		return out
	}
	return TasksWhere(tasks, func(t Task) bool {
		title := slots.TitleStems(t.Title)
		return len(title) > 0 && slots.ContainsAll(query, title)
	})
}

// ClosestTasks returns the tasks that share the most words with the name,
// when some share any, and how many words they share.
func ClosestTasks(tasks []Task, words []string) (closest []Task, shared int) {
	query := slots.Stems(words)
	for _, t := range tasks {
		title := slots.TitleStems(t.Title)
		n := 0
		for _, q := range query {
			if slots.ContainsAll(title, []string{q}) {
				n++
			}
		}
		switch {
		case n > shared:
			shared, closest = n, []Task{t}
		case n == shared && n > 0:
			closest = append(closest, t)
		}
	}
	return closest, shared
}

// PickItems reads which of the tasks offered to add an answer takes ("the
// last two", "all but the jam", "both"); ok is false when it picks none so.
func PickItems(items []grammar.Item, r slots.Ref) ([]grammar.Item, bool) {
	switch r.Kind {
	case slots.RefOrdinal: // "the first", "the last two"
		from, to, ok := ordinalSpan(r, len(items))
		return items[from:to], ok
	case slots.RefAll:
		return items, r.Status == "all"
	case slots.RefFocus:
		return items, r.Plural && (r.Count == 0 || r.Count == len(items))
	case slots.RefOther:
		kept := slices.DeleteFunc(slices.Clone(items), func(it grammar.Item) bool {
			return slices.ContainsFunc(r.Except, func(x slots.Ref) bool { // named by its words
				return x.Kind == slots.RefName && len(MatchTasks([]Task{{ID: 1, Title: it.Title}}, x.Words, false)) > 0
			})
		})
		return kept, len(kept) > 0 && len(kept) < len(items)
	}
	return nil, false
}

// Except returns the candidates except does not name, by number or name,
// and whether it names any task at all.
func Except(candidates []Task, except []slots.Ref) (left []Task, named bool) {
	out := map[int64]bool{}
	for _, x := range except {
		switch x.Kind {
		case slots.RefIDs:
			for _, id := range x.IDs {
				out[id] = true
			}
		case slots.RefName:
			for _, t := range MatchTasks(candidates, x.Words, true) {
				out[t.ID] = true
			}
		}
	}
	return TasksWhere(candidates, func(t Task) bool { return !out[t.ID] }), len(out) > 0
}

// PickFromFocus returns the tasks of focus a pronoun or an ordinal points
// at; ok is false when it does not fit ("it" among three).
func PickFromFocus(focus []Task, r slots.Ref) ([]Task, bool) {
	switch {
	case len(focus) == 0:
		return nil, false
	case r.Kind == slots.RefOrdinal:
		from, to, ok := ordinalSpan(r, len(focus))
		return focus[from:to], ok
	case r.Count == 2 && len(focus) != 2, !r.Plural && len(focus) > 1:
		return nil, false
	}
	return focus, true
}

// ordinalSpan is where an ordinal ("the last two") points among n things,
// as a slice's bounds; ok is false, and the span empty, past them.
func ordinalSpan(r slots.Ref, n int) (from, to int, ok bool) {
	count := max(r.Count, 1)
	from = r.Index
	if from < 0 {
		from = n - count
	}
	if from < 0 || from+count > n {
		return 0, 0, false
	}
	return from, from + count, true
}
