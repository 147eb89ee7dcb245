// Command lanes keeps the state of many players, each updated by its own
// serial lane on a shared pool, and applies the results on the main thread,
// where a game would draw them.
//
// Commands for the players arrive from several network goroutines at once.
// Each player's commands must apply one at a time, in the order they came:
// a taskqueue.Keyed gives each player a serial lane, which exists only while
// the player has commands waiting, so a hundred thousand players cost no
// goroutine and no queue each. The lanes run on a concurrent queue of
// GOMAXPROCS slots. Each update posts the player's new position to the main
// thread with RunAsyncOnMainThread; the main thread owns the world map and
// needs no lock.
//
//	go run ./examples/lanes
package main

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"log"
	"runtime"
	"sync"
	"time"

	"github.com/taskqueue-go/taskqueue/mainthread"
	"github.com/taskqueue-go/taskqueue/taskqueue"
)

func main() {
	players := flag.Int("players", 100_000, "number of players")
	commands := flag.Int("commands", 10, "commands per player")
	senders := flag.Int("senders", 8, "network goroutines sending commands")
	flag.Parse()
	var summary string
	var err error
	mainthread.Run(func() {
		start := time.Now()
		summary, err = run(*players, *commands, *senders)
		summary += fmt.Sprintf(" in %v", time.Since(start).Round(time.Millisecond))
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(summary)
}

// A move is a player's command: a step on the map.
type move struct{ dx, dy int }

// player is the state a lane owns: only the player's own lane touches it.
type player struct {
	x, y  int
	moves int
}

// run plays the commands and returns a summary of the world. It must run off
// the main thread, which mainthread.Run serves.
func run(players, commands, senders int) (string, error) {
	ctx := context.Background()
	pool := taskqueue.NewConcurrent(runtime.GOMAXPROCS(0))
	lanes := taskqueue.NewKeyed[int](pool)
	state := make([]player, players) // state[i] belongs to lane i

	// The main thread's world map: written by the functions posted to it.
	type pos struct{ x, y int }
	world := make(map[int]pos, players)
	var posting sync.WaitGroup

	// Each sender sends every command of its share of the players, in
	// order per player, interleaved with the other senders.
	var senderWG sync.WaitGroup
	for s := range senders {
		senderWG.Go(func() {
			for c := range commands {
				for id := s; id < players; id += senders {
					m := command(id, c)
					err := lanes.Go(id, func() {
						p := &state[id]
						p.x += m.dx
						p.y += m.dy
						p.moves++
						x, y := p.x, p.y
						posting.Add(1)
						err := taskqueue.RunAsyncOnMainThread(func() {
							defer posting.Done()
							world[id] = pos{x, y}
						})
						if err != nil {
							posting.Done()
						}
					})
					if err != nil {
						log.Fatal(err)
					}
				}
			}
		})
	}
	senderWG.Wait()
	if err := pool.Shutdown(ctx); err != nil {
		return "", err
	}
	posting.Wait()

	// Every player's commands applied in order: its last position on the
	// main thread is the sum of its moves.
	var h uint64
	err := taskqueue.RunSyncOnMainThread(ctx, func() {
		for id := range players {
			want := pos{}
			for c := range commands {
				m := command(id, c)
				want.x += m.dx
				want.y += m.dy
			}
			if world[id] != want {
				panic(fmt.Sprintf("player %d at %v; its moves lead to %v", id, world[id], want))
			}
			h = h*31 + uint64(world[id].x*7+world[id].y)
		}
	})
	if err != nil {
		return "", err
	}
	for id := range state {
		if state[id].moves != commands {
			return "", fmt.Errorf("player %d made %d moves; want %d", id, state[id].moves, commands)
		}
	}
	return fmt.Sprintf("%d players, %d commands each, applied in order on %d slots (world %016x, %d lanes left)",
		players, commands, pool.Stats().Limit, h, lanes.Lanes()), nil
}

// command returns player id's c-th command, the same in every run.
func command(id, c int) move {
	f := fnv.New32a()
	fmt.Fprint(f, id, ":", c)
	v := f.Sum32()
	return move{int(v%5) - 2, int(v/5%5) - 2}
}
