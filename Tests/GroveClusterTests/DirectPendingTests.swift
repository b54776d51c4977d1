@testable import GroveCluster
@testable import GroveWorker
import Testing

/// The ring of direct requests a worker delivered and has not answered (``DirectPending``).
@Suite(.timeLimit(.minutes(2))) struct DirectPendingTests {
    static func request(_ correlation: UInt64, bytes: Int = 10) -> DirectPending.Request {
        DirectPending.Request(peer: [0, 0, 0, 0, 1], correlation: correlation, address: "counter/k", bytes: bytes)
    }

    @Test func aRequestIsFoundByItsIdOnceAndCarriesItsSender() throws {
        var pending = DirectPending(capacity: 4)
        let id = pending.insert(Self.request(7, bytes: 30), sender: 12)
        #expect(DirectRequestID.sender(of: id) == 12)
        #expect(pending[id]?.correlation == 7 && pending.count == 1 && pending.bytes == 30)
        #expect(pending[id ^ 1] == nil, "another id, whatever its slot")
        #expect(pending.remove(id)?.correlation == 7)
        #expect(pending.remove(id) == nil, "answered once")
        #expect(pending.isEmpty && pending.bytes == 0)
    }

    @Test func theRingGrowsWhenHalfFullAndKeepsEveryRequest() throws {
        var pending = DirectPending(capacity: 4)
        let ids = (0..<100).map { pending.insert(Self.request(UInt64($0)), sender: 1) }
        #expect(Set(ids).count == 100 && pending.count == 100 && pending.capacity == 256)
        for (index, id) in ids.enumerated() { #expect(pending[id]?.correlation == UInt64(index)) }
        for id in ids { _ = pending.remove(id) }
        #expect(pending.isEmpty)
    }

    @Test func aRequestLeftUnansweredWhileTheRingTurnsKeepsItsSlotAndTheNextIdSkipsIt() throws {
        var pending = DirectPending(capacity: 8)
        let old = pending.insert(Self.request(1), sender: 0)
        // Many turns of the ring, one request at a time: each takes the next free sequence.
        var last = old
        for round in 0..<50 {
            let id = pending.insert(Self.request(UInt64(100 + round)), sender: 0)
            #expect(id != old && id & 7 != old & 7, "never the slot still taken")
            #expect(pending.remove(id)?.correlation == UInt64(100 + round))
            last = id
        }
        #expect(last != old && pending.capacity == 8 && pending[old]?.correlation == 1)
    }

    @Test func theSequenceWrapsAndAnIdStillPendingIsNotReused() throws {
        let last = DirectRequestID.sequenceMask
        var pending = DirectPending(capacity: 16, sequence: last - 2)
        let first = pending.insert(Self.request(1), sender: 3)
        // Past the wrap and round the ring many times, answered as it goes: the first is still
        // pending, its id never given again.
        var sequences: [UInt64] = []
        for _ in 0..<100 {
            let id = pending.insert(Self.request(2), sender: 3)
            #expect(id != first)
            sequences.append(id & last)
            #expect(pending.remove(id) != nil)
        }
        #expect(Array(sequences.prefix(4)) == [last - 1, last, 0, 1], "the sequence wraps to 0")
        #expect(!sequences.contains(last - 2) && !sequences.contains { $0 & 15 == (last - 2) & 15 })
        #expect(pending[first]?.correlation == 1 && pending.count == 1)
    }
}
