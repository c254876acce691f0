//go:build race

package offline

// raceDetector reports a build with the race detector, whose sync.Pool
// drops some of what is put back at random: allocations then vary a
// little from run to run.
const raceDetector = true
