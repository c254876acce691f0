//go:build !race

package offline

// raceDetector: see race_test.go.
const raceDetector = false
