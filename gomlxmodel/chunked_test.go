package gomlxmodel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // graph code reads like math
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

// TestBlockCausalAttention compares blockCausalAttention and its hand-written gradient with plain
// softmax attention under the same packed mask (two sequences per row), differentiated by GoMLX.
func TestBlockCausalAttention(t *testing.T) {
	backend := testEng().Backend()
	const Bt, T, dh = 3, 16, 4
	rng := rand.New(rand.NewPCG(12, 13))
	q, k, v, r := randTensor(rng, Bt, T, dh), randTensor(rng, Bt, T, dh), randTensor(rng, Bt, T, dh), randTensor(rng, Bt, T, dh)
	seg := make([]int32, Bt*T) // row b: positions before 3+4b in sequence 0, the rest in sequence 1
	for b := range Bt {
		for p := 3 + 4*b; p < T; p++ {
			seg[b*T+p] = 1
		}
	}
	segT := tensors.FromFlatDataAndDimensions(seg, Bt, T)
	for _, chunk := range []int{4, 8, 16} {
		t.Run(fmt.Sprintf("chunk=%d", chunk), func(t *testing.T) {
			results := func(blocked bool) []*tensors.Tensor {
				e, err := NewExec(backend, func(q, k, v, r, seg *Node) []*Node {
					c := arch{Config: Config{Heads: 1}, grad: true}
					bias := packedBias(c, seg)
					var att *Node
					if blocked {
						att = blockCausalAttention(q, k, v, bias, chunk)
					} else {
						att = c.attention(Add(c.matmul(q, 2, k, 2, true), bias), v)
					}
					loss := ReduceAllSum(Mul(Tanh(att), r))
					return append([]*Node{att}, Gradient(loss, q, k, v)...)
				})
				if err != nil {
					t.Fatal(err)
				}
				out, err := e.Exec(q, k, v, r, segT)
				if err != nil {
					t.Fatal(err)
				}
				return out
			}
			blocked, plain := results(true), results(false)
			for i, name := range []string{"attention", "grad q", "grad k", "grad v"} {
				x, y := tensors.MustCopyFlatData[float32](blocked[i]), tensors.MustCopyFlatData[float32](plain[i])
				worst := 0.0
				for j := range x {
					worst = max(worst, math.Abs(float64(x[j]-y[j])))
				}
				if worst > 1e-5 {
					t.Errorf("%s: blocked and plain differ by %g", name, worst)
				}
			}
		})
	}
}
