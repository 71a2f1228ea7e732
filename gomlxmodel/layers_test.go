package gomlxmodel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	. "github.com/gomlx/gomlx/pkg/core/graph" //nolint:staticcheck // graph code reads like math
	"github.com/gomlx/gomlx/pkg/core/tensors"
)

func randTensor(rng *rand.Rand, dims ...int) *tensors.Tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return tensors.FromFlatDataAndDimensions(x, dims...)
}

// TestDotGradient checks dot's hand-written gradient (which relies on the order in which GoMLX
// calls custom-gradient hooks) against the stock DotGeneral gradient, for every layout in use.
func TestDotGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{4, 1024} { // 1024 rows: contractRows splits the weight gradient
		t.Run(fmt.Sprintf("rows=%d", n), func(t *testing.T) { checkDotGradient(t, rng, n) })
	}
}

func checkDotGradient(t *testing.T, rng *rand.Rand, rows int) {
	backend := testEng().Backend()
	for _, batch := range []bool{false, true} {
		for _, ca := range []int{0, 1} {
			for _, cb := range []int{0, 1} {
				t.Run(fmt.Sprintf("batch=%v/ca=%d/cb=%d", batch, ca, cb), func(t *testing.T) {
					o := 0
					var batchAxes []int
					prefix := []int{}
					if batch {
						o, batchAxes, prefix = 1, []int{0}, []int{3}
					}
					// a: contract dim 5 on axis o+ca, free dim 4; b: contract 5 on o+cb, free 6.
					aDims := append(append([]int{}, prefix...), 4, 4)
					aDims[o+ca], aDims[o+1-ca] = 5, rows
					bDims := append(append([]int{}, prefix...), 6, 6)
					bDims[o+cb], bDims[o+1-cb] = 5, 6
					outDims := append(append([]int{}, prefix...), rows, 6)
					a, b, r := randTensor(rng, aDims...), randTensor(rng, bDims...), randTensor(rng, outDims...)
					grads := func(custom bool) []*tensors.Tensor {
						e, err := NewExec(backend, func(a, b, r *Node) []*Node {
							var y *Node
							if custom {
								y = dot(a, o+ca, b, o+cb, batch)
							} else {
								y = DotGeneral(a, []int{o + ca}, batchAxes, b, []int{o + cb}, batchAxes)
							}
							loss := ReduceAllSum(Mul(Tanh(y), r))
							return append([]*Node{y}, Gradient(loss, a, b)...)
						})
						if err != nil {
							t.Fatal(err)
						}
						out, err := e.Exec(a, b, r)
						if err != nil {
							t.Fatal(err)
						}
						return out
					}
					custom, stock := grads(true), grads(false)
					for i, name := range []string{"value", "grad a", "grad b"} {
						x, y := tensors.MustCopyFlatData[float32](custom[i]), tensors.MustCopyFlatData[float32](stock[i])
						if custom[i].Shape().String() != stock[i].Shape().String() {
							t.Fatalf("%s: shape %s, stock %s", name, custom[i].Shape(), stock[i].Shape())
						}
						for j := range x {
							if d := math.Abs(float64(x[j] - y[j])); d > 1e-5*math.Max(1, math.Abs(float64(y[j]))) {
								t.Fatalf("%s[%d]: %g, stock %g", name, j, x[j], y[j])
							}
						}
					}
				})
			}
		}
	}
}
