package gpu

import "testing"

// TestPartitionMock: the demo partition makes exactly the instances asked
// for, named as the inventory reads them; bad specs and profiles that do
// not fit are refused.
func TestPartitionMock(t *testing.T) {
	parts, err := ParseMockMIG("7:1g.10gb*3+3g.40gb, 6:2g.20gb")
	if err != nil {
		t.Fatal(err)
	}
	lib, err := NewMock("dgxh100")
	if err != nil {
		t.Fatal(err)
	}
	if err := PartitionMock(lib, parts); err != nil {
		t.Fatal(err)
	}
	inv := mustNew(t, "mock:dgxh100", WithNVML(lib, true, "mock:dgxh100"))
	devs, err := inv.Devices(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, m := range devs[7].MIG {
		count[m.Profile]++
	}
	if !devs[7].MIGEnabled || count["1g.10gb"] != 3 || count["3g.40gb"] != 1 || len(devs[6].MIG) != 1 || devs[6].MIG[0].Profile != "2g.20gb" || devs[0].MIGEnabled {
		t.Fatalf("partition: GPU 7 %+v, GPU 6 %+v", devs[7].MIG, devs[6].MIG)
	}
	for _, bad := range []string{"x:1g.10gb", "7:big", "7:1g.10gb*9", "7"} {
		if _, err := ParseMockMIG(bad); err == nil {
			t.Errorf("spec %q accepted", bad)
		}
	}
	full, _ := ParseMockMIG("5:7g.80gb+1g.10gb")
	lib2, _ := NewMock("dgxh100")
	if err := PartitionMock(lib2, full); err == nil {
		t.Error("an instance beyond a full GPU was made")
	}
}
