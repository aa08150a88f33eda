// Command kassign-go-harness runs franz-go's group balancers (pkg/kgo, public API only) on a
// kassign JSON scenario (the format of python/kassign/scenario.py).
//
//	kassign-go-harness version
//	kassign-go-harness assign --strategy S FILE|-      # prints {"member": [["t", p], ...]}
//	kassign-go-harness time --strategy S [--repeat N] [--budget SEC] [--warmup SEC] [--out FILE] FILE
//
// Each member's JoinGroup metadata is what a franz-go member sends: the balancer's own
// JoinGroupMetadata(topics, currentAssignment, generation) (sticky history in the sticky user data,
// cooperative owned partitions in the subscription), then decoded and re-encoded with
// kmsg.ConsumerMemberMetadata only to add a rack or an explicit user_data_hex. One timed call is
// what a franz-go leader does with the JoinGroup response: GroupBalancer.MemberBalancer(members)
// (decodes every member's metadata), Balance(topics), then IntoSyncAssignment() (encodes every
// member's assignment for the SyncGroup request): bytes in, bytes out. Partition racks are not supported: franz-go
// reads them from a live client's metadata, which a harness without a client does not have.
//
// The time mode prints one JSON line per call ({"event": "warmup"|"sample", "seconds": x}) so a
// caller can enforce a per-call cap, then {"event": "done", ...}.
package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

type memberDoc struct {
	Topics          []string             `json:"topics"`
	Owned           [][2]json.RawMessage `json:"owned"`
	Generation      *int32               `json:"generation"`
	Rack            *string              `json:"rack"`
	GroupInstanceID *string              `json:"group_instance_id"`
	UserDataHex     *string              `json:"user_data_hex"`
}

type scenarioDoc struct {
	Topics         map[string]int32     `json:"topics"`
	Members        map[string]memberDoc `json:"members"`
	Lags           json.RawMessage      `json:"lags"`
	PartitionRacks json.RawMessage      `json:"partition_racks"`
	Options        json.RawMessage      `json:"options"`
}

func balancerFor(strategy string) (kgo.GroupBalancer, error) {
	switch strategy {
	case "range":
		return kgo.RangeBalancer(), nil
	case "roundrobin":
		return kgo.RoundRobinBalancer(), nil
	case "sticky":
		return kgo.StickyBalancer(), nil
	case "cooperative-sticky":
		return kgo.CooperativeStickyBalancer(), nil
	}
	return nil, fmt.Errorf("strategy: unknown strategy %q; franz-go has range, roundrobin, sticky, cooperative-sticky", strategy)
}

// joinMembers builds the JoinGroup response members, sorted by member id.
func joinMembers(sc *scenarioDoc, bal kgo.GroupBalancer) ([]kmsg.JoinGroupResponseMember, error) {
	ids := make([]string, 0, len(sc.Members))
	for id := range sc.Members {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]kmsg.JoinGroupResponseMember, 0, len(ids))
	for _, id := range ids {
		m := sc.Members[id]
		current := make(map[string][]int32)
		for _, pair := range m.Owned {
			var topic string
			var part int32
			if err := json.Unmarshal(pair[0], &topic); err != nil {
				return nil, fmt.Errorf("members.%s.owned: %v", id, err)
			}
			if err := json.Unmarshal(pair[1], &part); err != nil {
				return nil, fmt.Errorf("members.%s.owned: %v", id, err)
			}
			current[topic] = append(current[topic], part)
		}
		gen := int32(-1)
		if m.Generation != nil {
			gen = *m.Generation
		}
		topics := append([]string(nil), m.Topics...)
		sort.Strings(topics)
		metaBytes := bal.JoinGroupMetadata(topics, current, gen)
		if m.Rack != nil || m.UserDataHex != nil {
			meta := kmsg.NewConsumerMemberMetadata()
			if err := meta.ReadFrom(metaBytes); err != nil {
				return nil, fmt.Errorf("members.%s: re-reading metadata: %v", id, err)
			}
			if m.Rack != nil {
				meta.Rack = m.Rack
				if meta.Version < 3 {
					meta.Version = 3
				}
			}
			if m.UserDataHex != nil {
				ud, err := hex.DecodeString(*m.UserDataHex)
				if err != nil {
					return nil, fmt.Errorf("members.%s.user_data_hex: %v", id, err)
				}
				meta.UserData = ud
			}
			metaBytes = meta.AppendTo(nil)
		}
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID = id
		jm.InstanceID = m.GroupInstanceID
		jm.ProtocolMetadata = metaBytes
		out = append(out, jm)
	}
	return out, nil
}

// leaderOnce is one leader's work on the JoinGroup response, bytes in and bytes out: decode every
// member's metadata (MemberBalancer), balance, and encode every member's SyncGroup assignment
// (IntoSyncAssignment), as kassign's wire path does.
func leaderOnce(bal kgo.GroupBalancer, members []kmsg.JoinGroupResponseMember, all map[string]int32) (kgo.IntoSyncAssignment, []kmsg.SyncGroupRequestGroupAssignment, error) {
	// Fresh copies of the metadata bytes: a decoder may rewrite a short v1 header in place.
	ms := make([]kmsg.JoinGroupResponseMember, len(members))
	copy(ms, members)
	mb, interests, err := bal.MemberBalancer(ms)
	if err != nil {
		return nil, nil, err
	}
	topics := make(map[string]int32, len(interests))
	for t := range interests {
		if n, ok := all[t]; ok {
			topics[t] = n
		}
	}
	var into kgo.IntoSyncAssignment
	if be, ok := mb.(kgo.GroupMemberBalancerOrError); ok {
		into, err = be.BalanceOrError(topics)
		if err != nil {
			return nil, nil, err
		}
	} else {
		into = mb.Balance(topics)
	}
	return into, into.IntoSyncAssignment(), nil
}

// planOf is the assignment leaderOnce produced, member => topic => partitions (not timed).
func planOf(into kgo.IntoSyncAssignment, sync []kmsg.SyncGroupRequestGroupAssignment) (map[string]map[string][]int32, error) {
	if plan, ok := into.(*kgo.BalancePlan); ok {
		return plan.AsMemberIDMap(), nil
	}
	// Not a plan: decode the sync assignments as members would.
	out := make(map[string]map[string][]int32)
	for _, a := range sync {
		m, err := kgo.ParseConsumerSyncAssignment(a.MemberAssignment)
		if err != nil {
			return nil, err
		}
		out[a.MemberID] = m
	}
	return out, nil
}

// balanceOnce is leaderOnce's assignment.
func balanceOnce(bal kgo.GroupBalancer, members []kmsg.JoinGroupResponseMember, all map[string]int32) (map[string]map[string][]int32, error) {
	into, sync, err := leaderOnce(bal, members, all)
	if err != nil {
		return nil, err
	}
	return planOf(into, sync)
}

func assignmentJSON(members []kmsg.JoinGroupResponseMember, plan map[string]map[string][]int32) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteString(", ")
		}
		id, _ := json.Marshal(m.MemberID)
		b.Write(id)
		b.WriteString(": [")
		byTopic := plan[m.MemberID]
		topics := make([]string, 0, len(byTopic))
		for t := range byTopic {
			topics = append(topics, t)
		}
		sort.Strings(topics)
		first := true
		for _, t := range topics {
			ps := append([]int32(nil), byTopic[t]...)
			sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
			tj, _ := json.Marshal(t)
			for _, p := range ps {
				if !first {
					b.WriteString(", ")
				}
				first = false
				b.WriteByte('[')
				b.Write(tj)
				b.WriteString(", ")
				b.WriteString(strconv.Itoa(int(p)))
				b.WriteByte(']')
			}
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.Bytes()
}

func franzVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/twmb/franz-go" {
				return d.Version
			}
		}
	}
	return "unknown"
}

func die(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(code)
}

func main() {
	if len(os.Args) < 2 {
		die(2, "usage: kassign-go-harness version | assign --strategy S FILE|- | time --strategy S [--repeat N] [--budget SEC] [--warmup SEC] [--out FILE] FILE")
	}
	mode := os.Args[1]
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	if mode == "version" {
		fmt.Fprintf(out, "{\"franz_go\": %q, \"go\": %q}\n", franzVersion(), runtime.Version())
		return
	}
	fs := flag.NewFlagSet(mode, flag.ExitOnError)
	strategy := fs.String("strategy", "", "range, roundrobin, sticky or cooperative-sticky")
	repeat := fs.Int("repeat", 5, "timed calls (at least)")
	budget := fs.Float64("budget", 20, "stop timing after this many seconds once one sample exists")
	warmup := fs.Float64("warmup", 1, "warm-up seconds (at least one call)")
	minTime := fs.Float64("min-time", 1, "keep sampling short calls until this many seconds (at most 200 samples)")
	outFile := fs.String("out", "", "write the last assignment JSON here")
	fs.Parse(os.Args[2:])
	if fs.NArg() != 1 || *strategy == "" {
		die(2, "need --strategy and one scenario FILE (or -)")
	}
	var data []byte
	var err error
	if fs.Arg(0) == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(fs.Arg(0))
	}
	if err != nil {
		die(2, "scenario: %v", err)
	}
	t0 := time.Now()
	var sc scenarioDoc
	if err := json.Unmarshal(data, &sc); err != nil {
		die(2, "scenario: %v", err)
	}
	bal, err := balancerFor(*strategy)
	if err != nil {
		die(2, "%v", err)
	}
	members, err := joinMembers(&sc, bal)
	if err != nil {
		die(2, "%v", err)
	}
	if mode == "assign" {
		plan, err := balanceOnce(bal, members, sc.Topics)
		if err != nil {
			die(1, "balance: %v", err)
		}
		out.Write(assignmentJSON(members, plan))
		out.WriteByte('\n')
		return
	}
	if mode != "time" {
		die(2, "unknown mode %q", mode)
	}
	emit := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	emit("{\"event\": \"ready\", \"setup_s\": %g}", time.Since(t0).Seconds())
	var into kgo.IntoSyncAssignment
	var sync []kmsg.SyncGroupRequestGroupAssignment
	var lastCPU float64
	call := func() float64 {
		c := processCPU()
		s := time.Now()
		i, a, err := leaderOnce(bal, members, sc.Topics)
		d := time.Since(s).Seconds()
		lastCPU = processCPU() - c
		if err != nil {
			die(1, "balance: %v", err)
		}
		into, sync = i, a
		return d
	}
	warmSpent, warmN := 0.0, 0
	for warmN < 1 || (warmSpent < *warmup && warmN < 200) {
		d := call()
		warmSpent += d
		warmN++
		emit("{\"event\": \"warmup\", \"seconds\": %g}", d)
	}
	var samples []float64
	spent := 0.0
	for len(samples) == 0 || (len(samples) < *repeat && spent < *budget) || (spent < *minTime && len(samples) < 200) {
		runtime.GC() // do not bill one call for the previous call's garbage
		d := call()
		spent += d
		samples = append(samples, d)
		emit("{\"event\": \"sample\", \"seconds\": %g, \"cpu\": %g}", d, lastCPU)
	}
	if *outFile != "" {
		plan, err := planOf(into, sync)
		if err != nil {
			die(1, "balance: %v", err)
		}
		if err := os.WriteFile(*outFile, assignmentJSON(members, plan), 0o644); err != nil {
			die(1, "out: %v", err)
		}
	}
	sort.Float64s(samples)
	n := len(samples)
	median := samples[n/2]
	if n%2 == 0 {
		median = (samples[n/2-1] + samples[n/2]) / 2
	}
	sj, _ := json.Marshal(samples)
	emit("{\"event\": \"done\", \"median\": %g, \"samples\": %s}", median, sj)
}

// processCPU is the process's user + system CPU seconds (all threads, GC included), so a loaded
// machine does not bill time spent waiting for a core.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
