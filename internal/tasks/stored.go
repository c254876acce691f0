package tasks

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// What a call's record keeps is bounded, whatever the call answered: a
// listing of a thousand long tasks is 1.3 MB, and every call is recorded.
const (
	// MaxStoredJSON is the most bytes a call's record keeps of its
	// arguments or of its result (other than a listing's, which is kept as
	// a ListSummary): anything longer is kept as a TruncatedJSON.
	MaxStoredJSON = 16 << 10
	// SummaryTasks is how many of a listing's tasks its ListSummary keeps
	// with their titles; the ids of all of them are kept.
	SummaryTasks = 50
)

// ListSummary is what a call's record keeps of list_tasks' result: how
// many tasks it listed and the ids of all of them, in order, the first
// SummaryTasks with their titles, and the cursor it answered, rather than
// a copy of the tasks. An audit reads in it what was listed; a model that
// reads an old listing in its history reads it too, and Note tells it
// what it is and how to see the tasks now.
type ListSummary struct {
	Note       string        `json:"note"`
	Count      int           `json:"count"`
	IDs        []int64       `json:"ids"`
	Tasks      []SummaryItem `json:"tasks"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

// SummaryItem is one task of a ListSummary, as it was listed.
type SummaryItem struct {
	ID        int64  `json:"id"`
	Title     string `json:"title"`
	Completed bool   `json:"completed"`
}

// TruncatedJSON is what a call's record keeps of arguments or a result
// longer than MaxStoredJSON: what it was, cut, with a note saying so.
type TruncatedJSON struct {
	Truncated string `json:"truncated"`
	Bytes     int    `json:"bytes"`
	Head      string `json:"head"`
}

// StoredResult is what a call's record keeps of the result a call to tool
// answered: a ListSummary for a listing, and any other result as it was,
// bounded (StoredJSON).
func StoredResult(tool string, result json.RawMessage) json.RawMessage {
	if tool == ToolListTasks {
		var list ListResult
		if json.Unmarshal(result, &list) == nil && list.Tasks != nil {
			b, _ := json.Marshal(SummarizeList(list))
			return StoredJSON(b)
		}
	}
	return StoredJSON(result)
}

// SummarizeList is the ListSummary of a listing.
func SummarizeList(list ListResult) ListSummary {
	s := ListSummary{Count: len(list.Tasks), IDs: make([]int64, len(list.Tasks)), Tasks: []SummaryItem{}, NextCursor: list.NextCursor}
	for i, t := range list.Tasks {
		s.IDs[i] = t.ID
	}
	// The budget counts the bytes as PostgreSQL prints jsonb, a space
	// after each comma and colon.
	ids, _ := json.Marshal(s.IDs)
	budget := MaxStoredJSON - len(ids) - len(s.IDs) - len(s.NextCursor) - summaryOverhead
	for _, t := range list.Tasks[:min(len(list.Tasks), SummaryTasks)] {
		item := SummaryItem{ID: t.ID, Title: t.Title, Completed: t.Completed}
		b, _ := json.Marshal(item)
		// ", " between items, and a space after each of an item's two
		// commas and three colons.
		if budget -= len(b) + 2 + 5; budget < 0 {
			break // long titles: fewer of them, so that the summary stays whole
		}
		s.Tasks = append(s.Tasks, item)
	}
	s.Note = listNote(s)
	return s
}

// summaryOverhead is room enough in a ListSummary for its note and the
// names of its members.
const summaryOverhead = 512

func listNote(s ListSummary) string {
	note := "A listing that found no tasks then; list_tasks shows the tasks as they are now."
	if s.Count > 0 {
		note = fmt.Sprintf("A listing of %d tasks as they were then, kept as their ids and the first %d with their titles; "+
			"list_tasks shows the tasks as they are now.", s.Count, len(s.Tasks))
	}
	if s.NextCursor != "" {
		note += " More tasks matched than it listed."
	}
	return note
}

// StoredJSON is raw as a call's record keeps it: storable (StorableJSON),
// and when longer than MaxStoredJSON bytes, a TruncatedJSON of it.
func StoredJSON(raw json.RawMessage) json.RawMessage {
	b, _ := StorableJSON(raw)
	if len(b) <= MaxStoredJSON {
		return b
	}
	// The head is cut until its escaped form fits too, a few tries at most.
	for n := MaxStoredJSON - truncatedOverhead; ; {
		head := b[:n]
		for len(head) > 0 && !utf8.Valid(head) { // a character cut in two
			head = head[:len(head)-1]
		}
		out, _ := json.Marshal(TruncatedJSON{
			Truncated: fmt.Sprintf("This was %d bytes long; only its first %d are kept.", len(b), len(head)),
			Bytes:     len(b),
			Head:      string(head),
		})
		if len(out)+truncatedOverhead <= MaxStoredJSON || n == 0 {
			return out
		}
		n = n * (MaxStoredJSON - truncatedOverhead) / (len(out) + truncatedOverhead) // fewer, by how much it escaped
	}
}

// truncatedOverhead is room enough in a TruncatedJSON for its note, the
// names of its members, and the spaces PostgreSQL prints in jsonb.
const truncatedOverhead = 160
