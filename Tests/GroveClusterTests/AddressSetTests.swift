@testable import GroveCoordinator
import Testing

/// ``AddressSet`` is the instance book's per-machine set: it must answer as `Set<String>` did,
/// through growth, removals that shift runs back (wrapping past the table's end) and the limit.
@Suite("AddressSet", .timeLimit(.minutes(2)))
struct AddressSetTests {
    @Test(arguments: [40, 5000]) func itAnswersAsASetThroughInsertionsAndRemovals(keys: Int) {
        var random = SeededRandom(seed: UInt64(keys))
        var set = AddressSet()
        var model = Set<String>()
        for step in 0..<60_000 {
            let address = "counter/\(Int.random(in: 0..<keys, using: &random))"
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                let inserted = set.insert(address)
                #expect(inserted == model.insert(address).inserted)
            case 1:
                let removed = set.remove(address)
                #expect(removed == (model.remove(address) != nil))
            default: #expect(set.contains(address) == model.contains(address))
            }
            #expect(set.count == model.count)
            if step % 10_000 == 0 {
                #expect(Set(set) == model)
                #expect(Array(set).count == model.count, "each address once")
            }
        }
        #expect(Set(set) == model)
        for address in model {
            let removed = set.remove(address)
            #expect(removed)
        }
        #expect(set.isEmpty && Array(set).isEmpty)
        #expect(!set.contains("counter/0"))
    }

    @Test func itKeepsEveryAddressAcrossManyDoublings() {
        var set = AddressSet()
        for index in 0..<100_000 { set.insert("counter/\(index)") }
        #expect(set.count == 100_000)
        #expect((0..<100_000).allSatisfy { set.contains("counter/\($0)") })
        let again = set.insert("counter/99999")
        #expect(!set.contains("counter/100000") && !again)
        #expect(Set(set).count == 100_000)
    }

    @Test func theLimitRefusesOnlyANewAddress() {
        var set = AddressSet()
        let added = ["a", "b", "c"].map { set.insert("counter/\($0)", unlessCountReaches: 3) }
        #expect(added == [.added, .added, .added])
        let past = set.insert("counter/d", unlessCountReaches: 3)
        let held = set.insert("counter/b", unlessCountReaches: 3)
        #expect(past == .full)
        #expect(held == .present, "an address it holds is there, full or not")
        #expect(set.count == 3 && !set.contains("counter/d"))
        let removed = set.remove("counter/a")
        let freed = set.insert("counter/d", unlessCountReaches: 3)
        #expect(removed && freed == .added)
        #expect(Set(set) == ["counter/b", "counter/c", "counter/d"])
    }

    /// Swift compares strings canonically (`e` and a combining accent equal `é`): so did the
    /// `Set<String>` it replaces, and so does it (the coordinator refuses addresses not in NFC
    /// before they get here).
    @Test func itComparesAsSwiftStringsDo() {
        var set = AddressSet()
        let composed = set.insert("counter/é")
        let decomposed = set.insert("counter/e\u{301}")
        #expect(composed && !decomposed)
        #expect(set.contains("counter/e\u{301}") && set.count == 1)
    }
}
