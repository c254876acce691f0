package telemetry

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// ObservePool exports the database pool's state, read from pool.Stat() at
// each scrape: nothing is done per query. Call it once per registry.
func (t *Telemetry) ObservePool(pool *pgxpool.Pool) {
	if t.Metrics() {
		t.reg.MustRegister(poolCollector{pool})
	}
}

// poolCollector reads pgxpool's own counters. They have no counterpart in
// the database client conventions, which want histograms pgxpool does not
// keep, so they are named after pgxpool's.
type poolCollector struct{ pool *pgxpool.Pool }

var (
	poolConns = prometheus.NewDesc("taskchat_db_pool_connections",
		"Connections of the database pool, by state: acquired (in use), idle, or constructing.", []string{"state"}, nil)
	poolMax = prometheus.NewDesc("taskchat_db_pool_max_connections",
		"The most connections the pool opens.", nil, nil)
	poolAcquires = prometheus.NewDesc("taskchat_db_pool_acquires_total",
		"Connections acquired from the pool.", nil, nil)
	poolEmptyAcquires = prometheus.NewDesc("taskchat_db_pool_empty_acquires_total",
		"Acquires that found no idle connection and waited for one to be opened or released.", nil, nil)
	poolCanceledAcquires = prometheus.NewDesc("taskchat_db_pool_canceled_acquires_total",
		"Acquires given up because their context ended first.", nil, nil)
	poolAcquireSeconds = prometheus.NewDesc("taskchat_db_pool_acquire_wait_seconds_total",
		"Time spent acquiring connections, in all.", nil, nil)
	poolNewConns = prometheus.NewDesc("taskchat_db_pool_new_connections_total",
		"Connections the pool opened.", nil, nil)
)

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolConns, poolMax, poolAcquires, poolEmptyAcquires, poolCanceledAcquires, poolAcquireSeconds, poolNewConns} {
		ch <- d
	}
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	gauge, counter := prometheus.GaugeValue, prometheus.CounterValue
	ch <- prometheus.MustNewConstMetric(poolConns, gauge, float64(s.AcquiredConns()), "acquired")
	ch <- prometheus.MustNewConstMetric(poolConns, gauge, float64(s.IdleConns()), "idle")
	ch <- prometheus.MustNewConstMetric(poolConns, gauge, float64(s.ConstructingConns()), "constructing")
	ch <- prometheus.MustNewConstMetric(poolMax, gauge, float64(s.MaxConns()))
	ch <- prometheus.MustNewConstMetric(poolAcquires, counter, float64(s.AcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolEmptyAcquires, counter, float64(s.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolCanceledAcquires, counter, float64(s.CanceledAcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolAcquireSeconds, counter, s.AcquireDuration().Seconds())
	ch <- prometheus.MustNewConstMetric(poolNewConns, counter, float64(s.NewConnsCount()))
}
