package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/taskchat/taskchat/internal/agent/openaitest"
)

// followHold holds the followed turn's model call until the measure is
// taken.
var followHold = make(chan struct{})

// followResult is the server's memory before and after n followers of one
// turn joined it; n is 0 when the phase did not run.
type followResult struct {
	before, after serverStats
	n             int
}

// followers starts one turn whose model call waits, then n followers of it
// (GET …/stream, each on a connection of its own), and measures the
// server once every follower has its start event: what a follower holds
// while it waits, against what an idle chat stream does.
func followers(base string, n int, fake *openaitest.Server) (followResult, error) {
	res := followResult{n: n}
	user := "follow-" + randomHex(4)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n + 1}}
	seen := fake.Requests()
	conv := make(chan int64, 1)
	go followedTurn(client, base, user, conv)
	id := <-conv
	if id == 0 {
		return res, fmt.Errorf("the followed turn did not start")
	}
	for deadline := time.Now().Add(30 * time.Second); fake.Requests() <= seen; {
		if time.Now().After(deadline) {
			return res, fmt.Errorf("the followed turn did not reach the model")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var err error
	if res.before, err = fetchStats(base, false); err != nil {
		return res, err
	}
	var joined, done sync.WaitGroup
	joined.Add(n)
	var failed atomic.Int64
	for range n {
		done.Go(func() {
			if !follow(client, base, user, id, joined.Done) {
				failed.Add(1)
			}
		})
	}
	joined.Wait()
	res.after, err = fetchStats(base, false)
	close(followHold)
	done.Wait()
	if failed.Load() > 0 {
		return res, fmt.Errorf("%d of %d followers failed", failed.Load(), n)
	}
	return res, err
}

// followedTurn sends the turn the followers follow, and tells conv its
// conversation (0 when it failed) once it has started.
func followedTurn(client *http.Client, base, user string, conv chan<- int64) {
	b, _ := json.Marshal(map[string]any{"message": "[follow] a turn to follow"})
	req, _ := http.NewRequest("POST", base+"/api/"+user+"/chat", strings.NewReader(string(b)))
	req.Header.Set("Authorization", "Bearer "+mustToken(user))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		conv <- 0
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sent := false
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && !sent {
			var start struct {
				ConversationID int64 `json:"conversation_id"`
			}
			_ = json.Unmarshal([]byte(data), &start)
			conv <- start.ConversationID
			sent = true
		}
	}
	if !sent {
		conv <- 0
	}
}

// follow follows the turn to its end, calling joined once it has the
// start event; it reports whether it read the turn's done event.
func follow(client *http.Client, base, user string, conv int64, joined func()) bool {
	once := sync.OnceFunc(joined)
	defer once()
	req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/%s/conversations/%d/stream", base, user, conv), nil)
	req.Header.Set("Authorization", "Bearer "+mustToken(user))
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		switch sc.Text() {
		case "event: start":
			once()
		case "event: done":
			return true
		}
	}
	return false
}
