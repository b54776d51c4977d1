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
