@testable import GroveWorker
import Testing

/// Which fresh keys start without a store read (`StoredKeys.swift`): never one the store may
/// hold, for a covered machine; always a read for a machine not covered.
@Suite(.timeLimit(.minutes(2)))
struct StoredKeysTests {
    @Test func aMachineNotCoveredIsAlwaysRead() {
        var keys = StoredKeys()
        #expect(keys.mayHold("counter/1", machine: "counter"))
        keys.made("counter/1", machine: "counter")
        #expect(keys.mayHold("counter/2", machine: "counter"))
    }

    @Test func aCoveredMachineHoldsWhatTheStoreListedAndWhatWasMadeSince() {
        var keys = StoredKeys()
        keys.covered("counter", by: ["counter/stored", "counter/in-memory"])
        keys.made("counter/new", machine: "counter")
        #expect(keys.mayHold("counter/stored", machine: "counter"))
        #expect(keys.mayHold("counter/in-memory", machine: "counter"))
        #expect(keys.mayHold("counter/new", machine: "counter"))
        // Another machine is not covered by this one: read.
        #expect(keys.mayHold("other/never", machine: "other"))
    }

    @Test func aMachineThatHandsOffIsReadAgainForEveryKey() {
        var keys = StoredKeys()
        keys.covered("counter", by: [])
        let fresh = (0..<100).filter { !keys.mayHold("counter/\($0)", machine: "counter") }.count
        #expect(fresh == 100)
        keys.uncover("counter")
        #expect(keys.mayHold("counter/1", machine: "counter"))
        // Made while not covered: not noted, and not needed, since every key is read.
        keys.made("counter/2", machine: "counter")
        #expect(!keys.covered.contains("counter"))
    }

    @Test func aGrowingFilterForgetsNoKeyAndReadsFewFreshOnes() {
        var filter = ScalableBloomFilter()
        let held = ScalableBloomFilter.firstCapacity + ScalableBloomFilter.firstCapacity / 2
        for index in 0..<held { filter.insert("counter/\(index)") }
        // A key the filter seems to hold already is not counted: a few of them.
        #expect(filter.count > held - held / 100 && filter.count <= held)
        let forgotten = (0..<held).filter { !filter.mayContain("counter/\($0)") }.count
        #expect(forgotten == 0)
        let fresh = 50_000
        let readForNothing = (held..<(held + fresh)).filter { filter.mayContain("counter/\($0)") }.count
        // About 0.3 % per layer, two layers here: well under 2 %.
        #expect(readForNothing < fresh / 50)
    }

    @Test func aKeyInsertedTwiceIsCountedOnce() {
        var filter = ScalableBloomFilter()
        filter.insert("counter/1")
        filter.insert("counter/1")
        #expect(filter.count == 1)
    }
}
