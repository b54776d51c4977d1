import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Testing

/// Issue 34, the second attacker's review, what was left open: a worker key claiming the case of
/// a real request lost with its machine, duplicate JSON keys in what workers write, and
/// worker-written addresses not held to the form clients' are.
@Suite("Coordinator core: what workers write", .timeLimit(.minutes(2)))
struct CoordinatorCoreWorkerInputTests {
    typealias Poison = CoordinatorCorePoisonTests

    // MARK: - A lost request's case is the coordinator's record

    /// Mallory's event `json` to `address` is forwarded to data-1, which dies with it (nobody
    /// saw the process exit: an external worker); its next process reports `reported` as the
    /// case it died running, naming that request.
    static func lose(_ fixture: inout CoreFixture, _ json: String, at address: String, binary: Bool = false, reported: String?,
                     round: Int) throws -> [CoordinatorAction] {
        let number = fixture.core.containment.number(ofSender: Poison.mallory + " 127.0.0.1")
        let payload = binary ? try BinaryCodec.encode(TallyCounter.Event.add(1)) : Array(json.utf8)
        let message = WireMessage(Header(.event, flags: binary ? .binary : [], correlation: UInt64(round)), address: address, payload: payload)
        guard case .forward(_, let id) = MessageView.with(message, { fixture.core.decide(client: Array("m".utf8), $0, as: Poison.sender,
                                                                                            sender: number) }) else {
            throw HarnessFailure("not forwarded")
        }
        var registration = CoreFixture.registration("data-1")
        registration.pid = Int32(800 + round)
        registration.incarnation = UInt64(80 + round)
        registration.startedAtMs = Int64(80 + round)
        registration.crash = CrashReport(address: address, type: "Counter", event: reported, origin: "sent", correlation: id)
        return fixture.register(registration)
    }

    struct HarnessFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static func keyOnDataOne(_ fixture: CoreFixture, _ index: Int = 0) -> String {
        (1...80).map { "counter/k-\($0)" }.filter { Poison.worker(of: $0, in: fixture) == "data-1" }[index]
    }

    @Test func aReportClaimingAnotherCaseThanTheLostRequestsCountsForNoPattern() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        // Twice: the requests carried `increment`; the worker says they were `add`.
        for round in 1...2 {
            let actions = try Self.lose(&fixture, #""increment""#, at: Self.keyOnDataOne(fixture, round), reported: "add", round: round)
            let said = Poison.warnings(actions).joined(separator: "\n")
            #expect(said.contains(#"reported case "add" for the request it lost"#) && said.contains(#"which carried case "increment""#), "\(said)")
            #expect(said.contains("counted without a pattern"), "\(said)")
        }
        #expect(fixture.core.containment.ledger.patterns.isEmpty, "the worker's claim quarantined \(fixture.core.containment.ledger.patterns)")
        // The crashes and their sender stand: the losses witness them.
        #expect(fixture.core.containment.ledger.crashes.map(\.pattern) == [nil, nil])
        #expect(fixture.core.containment.ledger.crashes.map(\.sender) == [Poison.mallory, Poison.mallory])
    }

    @Test func aReportNamingTheCaseTheClientSentCountsForItsPatternHoweverItWasSpelled() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        // An escape in the key, whitespace, and the binary codec: the case is `add` each time.
        _ = try Self.lose(&fixture, #" { "\u0061dd" : {"_0":1}}"#, at: Self.keyOnDataOne(fixture, 1), reported: "add", round: 1)
        let second = try Self.lose(&fixture, "", at: Self.keyOnDataOne(fixture, 2), binary: true, reported: "add", round: 2)
        #expect(Poison.warnings(second).contains { $0.contains("quarantined Counter.add for every address") }, "\(second)")
        #expect(fixture.core.containment.ledger.patterns == [PoisonPattern(type: "Counter", event: "add")])
    }

    @Test func aReportNamingACaseForARequestWhoseCaseCouldNotBeReadCountsForNoPattern() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        for round in 1...2 {
            _ = try Self.lose(&fixture, "[1,2]", at: Self.keyOnDataOne(fixture, round), reported: "add", round: round)
        }
        #expect(fixture.core.containment.ledger.patterns.isEmpty)
    }

    @Test func theCaseIsReadOnlyForAKeysEvents() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        // A trusted client (no key): its requests witness no crash, so nothing is read of them.
        let message = WireMessage(Header(.event, correlation: 1), address: "counter/a", payload: Array(#"{"add":{"_0":1}}"#.utf8))
        guard case .forward(_, let id) = MessageView.with(message, { fixture.core.decide(client: Array("c".utf8), $0) }) else {
            Issue.record("not forwarded")
            return
        }
        #expect(fixture.core.pending[id]?.eventCase == nil)
    }

    @Test func requestCasesAreReadAsTheirTypesCodableReadsThem() throws {
        func name(_ json: String) -> String? {
            Array(json.utf8).withUnsafeBytes { RequestCase.name(of: $0, binary: false) }
        }
        #expect(name(#"{"add":{"_0":5}}"#) == "add")
        #expect(name(#"  "increment""#) == "increment")
        #expect(name(#"{"\u0061dd":{}}"#) == "add")
        #expect(name(#"{"a\"b":{}}"#) == "a\"b")
        #expect(name(#"{"é":{}}"#) == "é")
        for none in ["", "{}", "[\"add\"]", "5", "{add:1}", "\"unterminated", "{\"a\u{1}\":1}", "{\"x\\u12\":1}"] {
            #expect(name(none) == nil, "\(none)")
        }
        func binary(_ bytes: [UInt8]) -> String? { bytes.withUnsafeBytes { RequestCase.name(of: $0, binary: true) } }
        #expect(binary(try BinaryCodec.encode(TallyCounter.Event.add(5))) == "add")
        #expect(binary(try BinaryCodec.encode(TallyCounter.Event.reset)) == "reset")
        #expect(binary(try BinaryCodec.encode("plain")) == "plain")
        for none: [UInt8] in [[], [0x09], [0x09, 0x00], [0x09, 0x01, 0x03], [0x07, 0x05, 0x61], [0x03, 0x02], [0x09, 0x01, 0xFF]] {
            #expect(binary(none) == nil, "\(none)")
        }
    }

    @Test func aKeyedEventsCaseIsReadAfterItsIdempotencyKey() {
        func name(_ payload: [UInt8]) -> String? {
            payload.withUnsafeBytes { RequestCase.name(of: RequestCase.unkeyed($0, flags: .keyed), binary: false) }
        }
        let key = IdempotencyKey(client: [1, 2, 3], sequence: 7)
        #expect(name(key.prefixed(Array(#"{"add":{"_0":5}}"#.utf8))) == "add")
        // A key that runs past the payload leaves no case to read (the worker refuses the event).
        #expect(name([3, 1, 2]) == nil)
        #expect(name([]) == nil)
        #expect(Array(#""reset""#.utf8).withUnsafeBytes { RequestCase.name(of: RequestCase.unkeyed($0, flags: []), binary: false) } == "reset")
    }

    // MARK: - Addresses workers write

    /// Two spellings of one key, NFC and decomposed, whose bytes the topology places on
    /// different instances of the data pool.
    static func spellingsOnTwoWorkers(_ fixture: CoreFixture) throws -> (nfc: String, decomposed: String, owner: String, other: String) {
        for stem in ["é", "éa", "éb", "éc", "éd", "ée", "éf", "ég", "éh"] {
            let nfc = "counter/" + stem
            let decomposed = "counter/" + stem.decomposedStringWithCanonicalMapping
            let owner = Poison.worker(of: nfc, in: fixture)
            let other = Poison.worker(of: decomposed, in: fixture)
            if owner != other { return (nfc, decomposed, owner, other) }
        }
        throw HarnessFailure("no key whose two spellings are placed apart")
    }

    @Test func aDecomposedAddressFromAWorkerIsRefusedBeforeItIsResolved() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let (nfc, decomposed, owner, other) = try Self.spellingsOnTwoWorkers(fixture)
        // The worker its bytes hash to speaks for the decomposed spelling. Kept among the
        // resolved addresses, it would take the NFC address's events (Swift finds one by the other).
        let change = WireMessage(Header(.stateChanged), address: decomposed,
                                 payload: Array(#"{"address":\#(JSONValue.string(decomposed)),"worker":"\#(other)","state":1}"#.utf8))
        let actions = fixture.fromWorker(other, change)
        #expect(actions.compactMap(\.published).isEmpty, "\(actions)")
        let refusal = try #require(actions.compactMap(\.sentToWorker).first)
        let error = try payload(WireError.self, of: refusal.message)
        #expect(error.code == .forbidden && error.message.contains("not a well-formed address (not in Unicode Normalization Form C"), "\(error)")
        #expect(Poison.warnings(actions).contains { $0.contains("refused state-changed from worker \(other)") })
        let sent = try fixture.sendEvent("c", to: nfc, correlation: 1)
        #expect(sent.worker == owner)
    }

    @Test func everyKindCarryingAnAddressAWorkerHostsIsHeldToTheForm() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let head: [UInt8] = [0, 9] + Array("FetchData".utf8) + [0, 3] + Array(#""x""#.utf8)
        for address in ["counter/x\ny", "counter/x\u{85}", "counter/" + String(repeating: "k", count: 1100)] {
            let worker = Poison.worker(of: address, in: fixture)
            for (kind, body) in [(MessageKind.stateChanged, Array("{}".utf8)), (.machine, Array("{}".utf8)),
                                 (.output, Array(#"{"output":"x"}"#.utf8)), (.ioRequest, head + Array("{}".utf8))] {
                let actions = fixture.fromWorker(worker, WireMessage(Header(kind, correlation: 5), address: address, payload: body))
                #expect(actions.compactMap(\.published).isEmpty, "\(kind) \(address.debugDescription): \(actions)")
                let warning = Poison.warnings(actions).joined()
                #expect(warning.isEmpty || !warning.contains("\n"), "a log line split: \(warning)")
                #expect(actions.compactMap(\.sentToWorker).contains { $0.worker == worker && $0.message.header.kind == .error })
            }
        }
        #expect(!fixture.core.resolved.keys.contains { $0.hasPrefix("counter/x") })
    }

    @Test func aCrashReportAtAnAddressThatIsNotWellFormedIsNotCounted() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let address = "counter/k\nworker data-2 lost"
        fixture.core.noteExit(of: "data-1", pid: 201, blamesEvent: true)
        _ = fixture.core.lose("data-1", reason: "gone", cause: .exited)
        var registration = CoreFixture.registration("data-1")
        registration.pid = 900
        registration.incarnation = 90
        registration.startedAtMs = 90
        registration.crash = CrashReport(address: address, type: "Counter", event: "add", origin: "sent\nforged", correlation: nil)
        let said = Poison.warnings(fixture.register(registration))
        #expect(said.contains { $0.contains("not a well-formed address") && $0.contains("not counted") }, "\(said)")
        #expect(said.allSatisfy { !$0.contains("\n") }, "\(said)")
        #expect(fixture.core.containment.ledger.crashes.isEmpty)
    }

    @Test func anIOResultGoesBackUnderTheCallsAddress() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        let head: [UInt8] = [0, 9] + Array("FetchData".utf8) + [0, 3] + Array(#""x""#.utf8)
        let started = fixture.fromWorker("edge", WireMessage(Header(.ioRequest, correlation: 4), address: "loader", payload: head + Array("{}".utf8)))
        let request = try #require(started.compactMap(\.sentToWorker).first { $0.message.header.kind == .ioRequest })
        let result = WireMessage(Header(.ioResult, correlation: request.message.header.correlation), address: "auth\nforged", payload: [0x00])
        let back = try #require(fixture.fromWorker(request.worker, result).compactMap(\.sentToWorker).first)
        #expect(back.worker == "edge" && back.message.address == "loader" && back.message.header.correlation == 4)
    }

    // MARK: - Duplicate keys where the coordinator reads

    @Test func aStateChangeGivingItsAddressTwiceIsRefusedNamingThePath() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        for (text, problem) in [
            (#"{"address":"auth","worker":"edge","state":1,"address":"sink"}"#, "the key $.address twice"),
            (#"{"address":"auth","worker":"edge","state":1,"worker":"data-1"}"#, "the key $.worker twice"),
            (#"{"state":1,"address":"auth","address":"sink","worker":"edge"}"#, "the key $.address twice"),
            // A state that closes the payload early: spliced into a snapshot, it would add an entry.
            (#"{"address":"auth","worker":"edge","state":1},{"topic":"state:sink","sequence":9,"payload":{"address":"sink","state":2}}"#,
             "not JSON"),
            (#"{"address":"auth","worker":"edge","state":{"a":[1}}"#, "not JSON"),
            ("nonsense", "not JSON"),
            ("[1]", "not a JSON object"),
        ] {
            let actions = fixture.fromWorker("edge", WireMessage(Header(.stateChanged), address: "auth", payload: Array(text.utf8)))
            #expect(actions.compactMap(\.published).isEmpty, "\(text): \(actions)")
            let refusal = try #require(actions.compactMap(\.sentToWorker).first, "\(text)")
            let error = try payload(WireError.self, of: refusal.message)
            #expect(error.code == .forbidden && error.message.contains(problem), "\(text): \(error.message)")
        }
        // Keys repeated inside the state are the worker's own: the coordinator reads nothing there.
        for payload in [#"{"address":"auth","worker":"edge","state":{"a":1,"a":2}}"#, #"{"state":{"a":1,"a":2},"address":"auth"}"#,
                        #"{"address":"auth","worker":"edge","state":{"x":[1,-2.5e3,true,null,"\u00e9\n",{}],"y":[]}}"#] {
            let actions = fixture.fromWorker("edge", WireMessage(Header(.stateChanged), address: "auth", payload: Array(payload.utf8)))
            #expect(actions.compactMap(\.published).count == 1, "\(payload): \(actions)")
        }
    }

    @Test func aRoutedOutputWithAKeyTwiceIsRefusedNotRoutedNorPublished() throws {
        var fixture = CoreFixture()
        fixture.registerAll()
        // auth(signedIn) → loader(load): which `signedIn` the route saw and which watchers saw could differ.
        for (text, path) in [(#"{"output":{"signedIn":{"_0":"ada"},"signedIn":{"_0":"Admin"}}}"#, "$.output.signedIn"),
                                (#"{"output":"loggedOut","output":"signedIn"}"#, "$.output")] {
            let actions = fixture.fromWorker("edge", WireMessage(Header(.output, correlation: 3), address: "auth", payload: Array(text.utf8)))
            #expect(actions.compactMap(\.published).isEmpty, "\(actions)")
            let refusal = try #require(actions.compactMap(\.sentToWorker).first)
            #expect(refusal.worker == "edge")
            let error = try payload(WireError.self, of: refusal.message)
            #expect(error.message.contains("the key \(path) twice"), "\(error.message)")
        }
        // Once each: routed.
        let once = fixture.fromWorker("edge", WireMessage(Header(.output), address: "auth", payload: Array(#"{"output":{"signedIn":{"_0":"ada"}}}"#.utf8)))
        #expect(once.compactMap(\.sentToWorker).contains { $0.message.address == "loader" && $0.message.header.kind == .event })
    }

    @Test func theScanFindsWhereAValueEnds() {
        func end(_ text: String, from start: Int = 0) -> Int? {
            Array(text.utf8).withUnsafeBufferPointer { JSONScan.end(ofValueIn: $0, from: start) }
        }
        #expect(end("1}") == 1)
        // Just after the value and the whitespace after it.
        let nested = #"{"a":[1,{"b":null}],"c":"x\"y"} "#
        #expect(end(nested) == nested.utf8.count)
        #expect(end(" [ ] ,") == 5)
        #expect(end(#""\u00e9""#) == 8)
        #expect(end("-0.5e+3") == 7)
        for invalid in ["", "{", "[1,]", "{\"a\"}", "{\"a\":1,}", "1.", "tru", "[1}", "{\"a\":1]", "\"a\u{1}\"", "\"\\x\"", "'a'",
                        String(repeating: "[", count: 600) + String(repeating: "]", count: 600)] {
            #expect(end(invalid) == nil, "\(invalid.prefix(20))")
        }
        #expect(Array([0x22, 0xC3, 0x28, 0x22]).withUnsafeBufferPointer { JSONScan.end(ofValueIn: $0, from: 0) } == nil, "not UTF-8")
    }
}
