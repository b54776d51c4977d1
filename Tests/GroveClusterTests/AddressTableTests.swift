import GroveCluster
import Testing

/// ``AddressTable`` holds the coordinator's instance book and a worker's state tables: it must
/// answer as `Dictionary<String, Value>` does, through growth, removals that shift runs back
/// (wrapping past the table's end), and a probe's slot used to add what it did not find.
@Suite("AddressTable", .timeLimit(.minutes(2)))
struct AddressTableTests {
    @Test(arguments: [40, 5000]) func itAnswersAsADictionaryThroughEveryChange(keys: Int) {
        var random = SeededRandom(seed: UInt64(keys) &+ 7)
        var table = AddressTable<Int>()
        var model: [String: Int] = [:]
        for step in 0..<60_000 {
            let address = "counter/\(Int.random(in: 0..<keys, using: &random))"
            switch Int.random(in: 0..<5, using: &random) {
            case 0:
                // A probe's slot: the value changed in place, or added where it stopped.
                let probe = table.probe(address)
                #expect(probe.found == (model[address] != nil))
                if probe.found {
                    table[found: probe] += 1
                    model[address]! += 1
                } else {
                    table.insert(step, for: address, at: probe)
                    model[address] = step
                }
            case 1:
                let probe = table.probe(address)
                if probe.found {
                    let removed = table.remove(at: probe)
                    #expect(removed == model.removeValue(forKey: address))
                } else {
                    #expect(model[address] == nil)
                }
            case 2:
                #expect(table.removeValue(forKey: address) == model.removeValue(forKey: address))
            case 3:
                let value = Bool.random(using: &random) ? step : nil
                table[address] = value
                model[address] = value
            default:
                #expect(table[address] == model[address])
            }
            #expect(table.count == model.count)
            if step % 10_000 == 0 { #expect(contents(of: table) == model) }
        }
        #expect(contents(of: table) == model)
        #expect(table.addresses.count == model.count, "each address once")
        for address in model.keys { table[address] = nil }
        #expect(table.isEmpty && Array(table).isEmpty)
    }

    @Test func itKeepsEveryAddressAndValueAcrossManyDoublings() {
        var table = AddressTable<Int>()
        for index in 0..<100_000 {
            let probe = table.probe("counter/\(index)")
            table.insert(index, for: "counter/\(index)", at: probe)
        }
        #expect(table.count == 100_000)
        // `(index: Int)`: left to inference, `index` would be an `Int?`, named "counter/Optional(0)".
        #expect((0..<100_000).allSatisfy { (index: Int) in table["counter/\(index)"] == index })
        #expect(!table.probe("counter/100000").found)
        table.removeAll()
        #expect(table.isEmpty && table["counter/1"] == nil)
        table["counter/1"] = 1
        #expect(table.count == 1 && table["counter/1"] == 1, "usable again once emptied")
    }

    /// A sweep walks the table a part at a time (``AddressTable/removeAll(fromSlot:slots:where:)``):
    /// with nothing changed between parts, it takes out exactly what it picks, whatever the
    /// part's size (removals shift runs back, across the table's end too).
    @Test(arguments: [1, 7, 1000, 100_000]) func aWalkInPartsTakesOutExactlyWhatItPicks(part: Int) {
        var random = SeededRandom(seed: UInt64(part))
        var table = AddressTable<Int>()
        var model: [String: Int] = [:]
        for index in 0..<3000 {
            let value = Int.random(in: 0..<10, using: &random)
            table["counter/\(index)"] = value
            model["counter/\(index)"] = value
        }
        var next: Int? = 0
        var removed = 0
        while let start = next {
            let walked = table.removeAll(fromSlot: start, slots: part) { $0 < 3 }
            removed += walked.removed
            next = walked.next
        }
        let kept = model.filter { $0.value >= 3 }
        #expect(contents(of: table) == kept)
        #expect(removed == model.count - kept.count)
        #expect(kept.keys.allSatisfy { table.probe($0).found } && table.count == kept.count)
    }

    /// Between two parts of a walk the table changes (events add keys, take some out): what the
    /// walk takes out is only what it picks, and the table answers for the rest as before.
    @Test func aWalkInPartsBesideChangesTakesOutOnlyWhatItPicks() {
        var random = SeededRandom(seed: 99)
        var table = AddressTable<Int>()
        var model: [String: Int] = [:]
        var nextID = 0
        func add() {
            let address = "counter/\(nextID)"
            // Even values stay, odd ones may be picked: the value is an id, unique.
            table[address] = nextID
            model[address] = nextID
            nextID += 1
        }
        for _ in 0..<2000 { add() }
        var picked: Set<Int> = []
        var next: Int? = 0
        while let start = next {
            next = table.removeAll(fromSlot: start, slots: 50) { value in
                guard value % 2 == 1 else { return false }
                picked.insert(value)
                return true
            }.next
            for _ in 0..<5 { add() }
            if let gone = model.keys.randomElement(using: &random) {
                table[gone] = nil
                model[gone] = nil
            }
        }
        for (address, value) in model where picked.contains(value) { model[address] = nil }
        #expect(contents(of: table) == model)
        #expect(model.keys.allSatisfy { table[$0] == model[$0] })
        #expect(picked.allSatisfy { $0 % 2 == 1 })
    }

    /// Swift compares strings canonically (`e` and a combining accent equal `é`), as a
    /// dictionary does (the coordinator refuses addresses not in NFC before they get here).
    @Test func itComparesAsSwiftStringsDo() {
        var table = AddressTable<Int>()
        table["counter/é"] = 1
        #expect(table.probe("counter/e\u{301}").found)
        table["counter/e\u{301}"] = 2
        #expect(table.count == 1 && table["counter/é"] == 2)
    }

    private func contents(of table: AddressTable<Int>) -> [String: Int] {
        Dictionary(table.map { ($0.address, $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}
