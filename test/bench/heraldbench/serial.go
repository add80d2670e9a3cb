package main

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/heraldfed/herald/adapters/delivery"
	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// The headline: Herald's fan-out against the design it replaces, one
// worker delivering one job after another. The serial worker is measured
// on a sample of the healthy inboxes (every serialEvery-th), delivered one
// after another with the same signed client, and scaled to them all: run
// whole it would take the sum of every answer time, over twenty minutes.
const serialEvery = 50

type serialRun struct {
	sample   int
	took     time.Duration // the sample, delivered one after another
	work     time.Duration // the servers' answer time of the sample
	overhead time.Duration // per delivery: took − work, over the sample
}

// measureSerial delivers the sample one job after another.
func measureSerial(ctx context.Context, f *fakeFediverse) (serialRun, error) {
	healthy, _, _, _ := f.inboxes(hostProfile.answers)
	kp, err := security.RSAKeys{}.GenerateKeyPair()
	if err != nil {
		return serialRun{}, err
	}
	client := delivery.New(delivery.Config{Timeout: timeout, AllowPrivate: true, UserAgent: "Herald/bench"})
	defer client.Close()
	f.reset("serial ")
	var run serialRun
	start := time.Now()
	for i := 0; i < len(healthy); i += serialEvery {
		u, err := url.Parse(healthy[i])
		if err != nil {
			return serialRun{}, err
		}
		run.work += f.hosts[u.Host].latency
		run.sample++
		body := fmt.Sprintf(`{"@context":"https://www.w3.org/ns/activitystreams","type":"Create","id":"https://herald.example/serial/%d","actor":"https://herald.example/users/alice","object":{"type":"Note","content":"serial hello, fediverse"}}`, i)
		o := client.Deliver(ctx, ports.Delivery{Inbox: healthy[i], Payload: []byte(body),
			KeyID: "https://herald.example/users/alice#main-key", PrivateKeyPEM: kp.PrivatePEM})
		if o.Kind != domain.OutcomeDelivered {
			return serialRun{}, fmt.Errorf("serial delivery to %s: %s (%s)", healthy[i], o.Kind, o.Reason)
		}
		if ctx.Err() != nil {
			return serialRun{}, ctx.Err()
		}
	}
	run.took = time.Since(start)
	run.overhead = max(run.took-run.work, 0) / time.Duration(max(run.sample, 1))
	return run, nil
}

// benchSerial writes the headline table from the fan-out rows of this run
// (made, by row name; the clean row at least) and a serial run of the
// sample.
func benchSerial(ctx context.Context, r *report, f *fakeFediverse, made map[string]fanRun) error {
	clean, ok := made["clean"]
	if !ok {
		return fmt.Errorf("the clean row did not run: the headline sets Herald's rows beside the serial worker's of the same run (-fanout-rows clean,dead,serial)")
	}
	fmt.Fprintf(os.Stderr, "   serial worker on every %dth healthy inbox\n", serialEvery)
	run, err := measureSerial(ctx, f)
	if err != nil {
		return err
	}
	healthy, work, _, _ := f.inboxes(hostProfile.answers)
	serial := work + time.Duration(len(healthy))*run.overhead
	hosts := len(f.hosts)
	t := &table{
		title:   "Herald against the single serial delivery worker it replaces",
		command: "go run ./test/bench/heraldbench -only fanout -fanout-rows clean,dead,serial",
		intro: fmt.Sprintf("One post to the followers on %d loopback hosts (the fan-out section below: %d inboxes a host, answers in 5–50 ms, %d%% of the hosts in %s), delivered by Herald (8 slots, 2 per host, the default settings) and by one worker that delivers one job after another, as the design Herald replaces did. "+
			"Makespan: from the post to the last delivery to a host that answers.", hosts, inboxesPerHost, int(slowShare*100), slowLatency),
		header: []string{"fan-out", "Herald", "one serial worker", "Herald faster by"},
		lead:   true,
	}
	labels := []string{"Herald, no faulty host", "serial worker, no faulty host"}
	values := []float64{clean.makespan.Seconds(), serial.Seconds()}
	t.rows = append(t.rows, []string{fmt.Sprintf("%d inboxes, no faulty host", len(healthy)), ms(clean.makespan), ms(serial), ratio(serial.Seconds(), clean.makespan.Seconds())})
	if deadRun, ok := made["dead"]; ok {
		deadInboxes := 0
		for _, p := range f.hosts {
			if p.kind == kindDead {
				deadInboxes += inboxesPerHost
			}
		}
		serialDead := serial + time.Duration(deadInboxes)*timeout
		t.rows = append(t.rows, []string{fmt.Sprintf("the same and %d inboxes of dead hosts (accept, never answer)", deadInboxes), ms(deadRun.makespan), ms(serialDead), ratio(serialDead.Seconds(), deadRun.makespan.Seconds())})
		labels = append(labels, "Herald, dead hosts", "serial worker, dead hosts")
		values = append(values, deadRun.makespan.Seconds(), serialDead.Seconds())
		t.notes = append(t.notes, fmt.Sprintf("With dead hosts the serial worker also waits out the %s delivery timeout once for each of their inboxes, one after another.", timeout))
	}
	t.notes = append(t.notes, fmt.Sprintf("The serial worker's makespan is the servers' answer time of every healthy inbox (%s, the prompt_work and slow_work of the fan-out bound) plus its own cost per delivery, %s: a sample of %d inboxes (every %dth) delivered one after another with Herald's signed client took %s for %s of answer time. "+
		"It keeps no queue, so it is the serial design at its fastest: a store write per job would only add to it.",
		ms(work), ms(run.overhead), run.sample, serialEvery, ms(run.took), ms(run.work)))
	t.plot = r.svg("serial-headline.svg", barChart("Fan-out makespan (s): Herald against one serial worker", "s", labels, values))
	r.add(t)
	return nil
}
