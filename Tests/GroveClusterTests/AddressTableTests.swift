@testable import GroveCluster
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

    /// A sweep walks the table a part at a time (``AddressTable/walk(slots:removing:)``): with
    /// nothing changed between parts, a round takes out exactly what it picks, whatever the
    /// part's size (removals shift runs back, across the table's end too), and walks the table's
    /// slots once.
    @Test(arguments: [1, 7, 1000, 100_000]) func aRoundInPartsTakesOutExactlyWhatItPicks(part: Int) {
        var random = SeededRandom(seed: UInt64(part))
        var table = AddressTable<Int>()
        var model: [String: Int] = [:]
        for index in 0..<3000 {
            let value = Int.random(in: 0..<10, using: &random)
            table["counter/\(index)"] = value
            model["counter/\(index)"] = value
        }
        var walked = 0
        var removed = 0
        while walked < table.capacity {
            let step = table.walk(slots: min(part, table.capacity - walked)) { $0 < 3 }
            removed += step.removed
            walked += step.walked
        }
        let kept = model.filter { $0.value >= 3 }
        #expect(contents(of: table) == kept)
        #expect(removed == model.count - kept.count)
        #expect(kept.keys.allSatisfy { table.probe($0).found } && table.count == kept.count)
        #expect(table.walk(slots: .max) { _ in false }.walked == table.capacity, "a walk is at most one round")
    }

    /// Between two parts of a round the table changes (events add keys, take some out, move
    /// others back behind the walk): the walk takes out only what it picks, and every address
    /// there from the round's start to its end is reached in it.
    @Test(arguments: [1, 5, 50]) func aRoundBesideChangesReachesEveryAddressThatStayed(part: Int) {
        var random = SeededRandom(seed: 99 &+ UInt64(part))
        var table = AddressTable<Int>()
        var model: [String: Int] = [:]
        var nextID = 0
        func add() {
            let address = "counter/\(nextID)"
            // The value is an id, unique: odd ones are picked.
            table[address] = nextID
            model[address] = nextID
            nextID += 1
        }
        for _ in 0..<2000 { add() }
        let capacity = table.capacity
        let atStart = Set(model.values)
        var picked: Set<Int> = []
        var walked = 0
        while walked < capacity {
            let step = table.walk(slots: min(part, capacity - walked)) { value in
                guard value % 2 == 1 else { return false }
                picked.insert(value)
                return true
            }
            walked += step.walked
            // Growth would start the round again: the changes keep the count steady.
            if let gone = model.keys.randomElement(using: &random) {
                table[gone] = nil
                model[gone] = nil
            }
            if Bool.random(using: &random) { add() }
            #expect(table.capacity == capacity)
        }
        for (address, value) in model where picked.contains(value) { model[address] = nil }
        #expect(contents(of: table) == model)
        #expect(picked.allSatisfy { $0 % 2 == 1 })
        // Every odd id there from the start and never taken out by a change was picked.
        let stayedOdd = atStart.filter { $0 % 2 == 1 && (picked.contains($0) || model.values.contains($0)) }
        #expect(stayedOdd.isSubset(of: picked), "missed: \(stayedOdd.subtracting(picked).sorted().prefix(5))")
    }

    /// The case a round could miss: an address the walk has not reached yet is moved back
    /// behind it by a removal between two parts (here, two keys with the same home slot: the
    /// walk passes the first, which then leaves for a host, and the second shifts into its
    /// slot). The walk goes back for it.
    @Test func anAddressMovedBackBehindTheWalkIsStillReachedInTheRound() throws {
        // Two keys with the same home slot, the first of them, in a table of 8 slots, away
        // from its end; found by probing an empty table, whose free slot is the home.
        let empty = AddressTable<Int>()
        var byHome: [Int: String] = [:]
        var pair: (first: String, second: String, home: Int)?
        for index in 0..<10_000 where pair == nil {
            let address = "counter/\(index)"
            let home = empty.probe(address).index
            guard home < 6 else { continue }
            if let first = byHome[home] { pair = (first, address, home) } else { byHome[home] = address }
        }
        let (first, second, home) = try #require(pair)
        var table = AddressTable<Int>()
        table[first] = 0  // stays
        table[second] = 1  // idle: picked
        #expect(table.capacity == 8 && table.probe(second).index == home + 1)
        // The walk passes the first key's slot, not the second's.
        let passed = table.walk(slots: home + 1) { $0 == 1 }
        #expect(passed.removed == 0)
        // The first leaves (an event moves it to a host): the second shifts into its slot.
        table[first] = nil
        #expect(table.probe(second).index == home)
        let rest = table.walk(slots: table.capacity - passed.walked) { $0 == 1 }
        #expect(rest.removed == 1, "the second key, moved behind the walk, is reached in the round")
        #expect(table.isEmpty)
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
