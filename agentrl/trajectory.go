package agentrl

import "fmt"

// Trajectory is arl.Trajectory, the record of one episode (or, from CallSample, of one call). Per-token fields have
// length L; per-position fields have length L-1 and index j describes IDs[j+1] (the alignment rule).
type Trajectory struct {
	IDs        []int32
	Owner      []Owner // nil for per-call samples
	Turn       []int32
	ActionMask []float32 // 1 where IDs[j+1] is a policy token
	Logp       []float32 // sampling log-prob of IDs[j+1] on policy positions, 0 elsewhere
	Reward     float64
	Info       Info
}

// MakeTrajectory is arl.make_trajectory: the Trajectory of an episode, with ActionMask == (Owner[1:] == policy).
func MakeTrajectory(e *Episode) Trajectory {
	n := len(e.IDs)
	t := Trajectory{
		IDs:    append([]int32(nil), e.IDs...),
		Owner:  append([]Owner(nil), e.Owner...),
		Turn:   append([]int32(nil), e.Turn...),
		Reward: e.Reward,
		Info:   e.Info,
	}
	if n > 1 {
		t.ActionMask, t.Logp = make([]float32, n-1), make([]float32, n-1)
		for j := 0; j < n-1; j++ {
			if e.Owner[j+1] == OwnerPolicy {
				t.ActionMask[j], t.Logp[j] = 1, e.Logp[j+1]
			}
		}
	}
	return t
}

// Batch is the result of arl.collate: row-major, right-padded tensors of B rows. T is the longest row; the
// per-position tensors have T-1 columns, column j describing token j+1.
type Batch struct {
	B, T       int
	IDs        []int32   // [B*T], padded with the pad id
	ActionMask []float32 // [B*(T-1)], 0 on padding
	Logp       []float32 // [B*(T-1)], sampling log-probs, 0 off policy positions
	TurnIDs    []int32   // [B*(T-1)], turn of the predicted token, -1 on padding
	Owner      []int8    // [B*(T-1)], owner of the predicted token, -1 on padding and for rows without owners
	Rewards    []float32 // [B]
}

// Collate is arl.collate: pads trajectories into one Batch.
func Collate(trajs []Trajectory, padID int32) Batch {
	b := Batch{B: len(trajs)}
	for _, t := range trajs {
		b.T = max(b.T, len(t.IDs))
	}
	p := max(b.T-1, 0)
	b.IDs = make([]int32, b.B*b.T)
	b.ActionMask, b.Logp = make([]float32, b.B*p), make([]float32, b.B*p)
	b.TurnIDs, b.Owner, b.Rewards = make([]int32, b.B*p), make([]int8, b.B*p), make([]float32, b.B)
	for i, t := range trajs {
		row := b.IDs[i*b.T : (i+1)*b.T]
		for j := range row {
			row[j] = padID
		}
		copy(row, t.IDs)
		b.Rewards[i] = float32(t.Reward)
		for j := 0; j < p; j++ {
			k := i*p + j
			b.TurnIDs[k], b.Owner[k] = -1, -1
			if j+1 >= len(t.IDs) {
				continue
			}
			if j < len(t.ActionMask) {
				b.ActionMask[k] = t.ActionMask[j]
			}
			if j < len(t.Logp) {
				b.Logp[k] = t.Logp[j]
			}
			if j+1 < len(t.Turn) {
				b.TurnIDs[k] = t.Turn[j+1]
			}
			if j+1 < len(t.Owner) {
				b.Owner[k] = int8(t.Owner[j+1])
			}
		}
	}
	return b
}

// PadRows is arl.pad_rows: rows right-padded with pad into a row-major [len(rows)*width] tensor. A row longer than
// width is a programmer error and panics.
func PadRows(rows [][]int32, width int, pad int32) []int32 {
	out := make([]int32, len(rows)*width)
	for i, r := range rows {
		if len(r) > width {
			panic(fmt.Sprintf("pad rows: row %d has %d > %d tokens", i, len(r), width))
		}
		dst := out[i*width : (i+1)*width]
		n := copy(dst, r)
		for j := n; j < width; j++ {
			dst[j] = pad
		}
	}
	return out
}

// Select returns the rows idx of the batch (rows may repeat), as a new batch of the same width.
func (b Batch) Select(idx []int) Batch {
	T1 := b.T - 1
	out := Batch{B: len(idx), T: b.T}
	for _, r := range idx {
		out.IDs = append(out.IDs, b.IDs[r*b.T:(r+1)*b.T]...)
		out.ActionMask = append(out.ActionMask, b.ActionMask[r*T1:(r+1)*T1]...)
		out.Logp = append(out.Logp, b.Logp[r*T1:(r+1)*T1]...)
		out.TurnIDs = append(out.TurnIDs, b.TurnIDs[r*T1:(r+1)*T1]...)
		out.Owner = append(out.Owner, b.Owner[r*T1:(r+1)*T1]...)
		out.Rewards = append(out.Rewards, b.Rewards[r])
	}
	return out
}

// SelectRows returns rows idx of x.
func SelectRows[S ~[]E, E any](x S, idx []int) S {
	out := make(S, len(idx))
	for i, r := range idx {
		out[i] = x[r]
	}
	return out
}

// Mask returns the batch's action mask as rows [B][T-1].
func (b Batch) Mask() [][]float32 { return Rows(b.ActionMask, b.T-1) }

// Turns returns the batch's turn ids as rows [B][T-1].
func (b Batch) Turns() [][]int32 { return Rows(b.TurnIDs, b.T-1) }
