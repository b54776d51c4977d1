@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// "Bounds before work" (docs/SECURITY.md): sizes refused before anything of a request is kept,
/// the owed-reply ledger bounded in bytes per client and in all, keyed instances bounded per
/// machine, and addresses in one form so grants and lookups agree.
@Suite("CoordinatorCore: bounds before work", .timeLimit(.minutes(2)))
struct CoordinatorCoreBoundsTests {
    static func fixture(_ limits: Topology.Limits = .init(), clientOutbox: Int = 10) -> CoreFixture {
        var topology = CoreFixture.topology
        topology.queues = .init(mailboxCapacity: 64, workerOutbox: 100_000, clientOutbox: clientOutbox, clientOutboxBytes: 1 << 20)
        topology.limits = limits
        var fixture = CoreFixture(topology: topology)
        fixture.registerAll()
        return fixture
    }

    static func decide(_ core: inout CoordinatorCore, _ client: String, _ message: WireMessage,
                       backlog: ClientBacklog = .empty, as principal: Gatekeeper.Principal? = .trusted) -> ClientDecision {
        MessageView.with(message) { core.decide(client: Array(client.utf8), $0, as: principal, backlog: backlog) }
    }

    static func event(_ correlation: UInt64, _ address: String, payload: Int = 11) -> WireMessage {
        WireMessage(Header(.event, correlation: correlation), address: address,
                    payload: payload == 11 ? Array(#""increment""#.utf8) : [UInt8](repeating: 0x20, count: payload))
    }

    static let full = ClientBacklog(messages: 10, bytes: 500)

    // MARK: - Sizes first

    @Test func aTooLongAddressIsRefusedNamingTheSettingAndNothingOfItIsKept() throws {
        var fixture = Self.fixture(.init(addressBytes: 64))
        let long = "counter/" + String(repeating: "k", count: 57)  // 65 bytes
        let decision = Self.decide(&fixture.core, "A", Self.event(1, long))
        guard case .act(let actions) = decision else { Issue.record("refused, not forwarded: \(decision)"); return }
        let error = try errorReply(in: actions, to: "A", correlation: 1)
        #expect(error.code == .malformedFrame)
        #expect(error.message.contains("65 bytes") && error.message.contains("limits.addressBytes"))
        #expect(error.address == nil, "the address is not echoed back")
        #expect(actions[0].sentToClient?.message.address == "")
        #expect(fixture.core.keyedInstances["counter"] == nil && fixture.core.resolved.isEmpty && fixture.core.pending.count == 0)
        // At the limit: forwarded.
        guard case .forward = Self.decide(&fixture.core, "A", Self.event(2, String(long.dropLast()))) else {
            Issue.record("an address of exactly limits.addressBytes is served")
            return
        }
    }

    /// The order of checks: a client over its queue's budget that sends an 8 MiB address is
    /// owed the size refusal, kept as a run without the address, not a busy holding 8 MiB.
    @Test func sizesAreCheckedBeforeTheOwedBusyLedgerRecordsAnything() throws {
        var fixture = Self.fixture()
        let client = Array("A".utf8)
        let huge = "counter/" + String(repeating: "k", count: 8 << 20)
        for correlation in 1...60 as ClosedRange<UInt64> {
            _ = Self.decide(&fixture.core, "A", Self.event(correlation, huge + "\(correlation)"), backlog: Self.full)
        }
        let owed = try #require(fixture.core.clientRules.ledger.owed[client])
        #expect(owed.count == 60)
        #expect(owed.runs.count == 1)
        #expect(owed.bytes == OwedBusies.runBytes, "no address bytes kept")
        #expect(fixture.core.clientRules.ledger.owedBytes == owed.bytes)
        let replies = fixture.core.releaseBusies(to: client, backlog: .empty)
        #expect(replies.count == 10)
        let first = try #require(replies.first?.sentToClient?.message)
        #expect(first.header.correlation == 1 && first.address.isEmpty)
        let error = try #require(first.wireError)
        #expect(error.code == .malformedFrame)
        #expect(error.message.contains("limits.addressBytes"), "the refusal names the limit, not a busy: \(error.message)")
    }

    @Test func aTooLargePayloadIsRefusedFirstAndOwedAsSuch() throws {
        var fixture = Self.fixture(.init(payloadBytes: 100, messageBytes: 2048))
        let now = Self.decide(&fixture.core, "A", Self.event(1, "counter/a", payload: 101))
        guard case .act(let actions) = now else { Issue.record("refused: \(now)"); return }
        let error = try errorReply(in: actions, to: "A", correlation: 1)
        #expect(error.code == .oversized)
        #expect(error.message.contains("101 bytes") && error.message.contains("limits.payloadBytes"))
        guard case .act(let later) = Self.decide(&fixture.core, "A", Self.event(2, "counter/a", payload: 101), backlog: Self.full),
              later.allSatisfy({ $0.sentToClient == nil }) else {
            Issue.record("a client that does not read is owed the refusal, nothing sent now")
            return
        }
        let owed = fixture.core.releaseBusies(to: Array("A".utf8), backlog: .empty)
        let owedError = try #require(owed.first?.sentToClient?.message.wireError)
        #expect(owedError.code == .oversized && owedError.message.contains("limits.payloadBytes"))
    }

    // MARK: - The owed-busy ledger

    /// The slow client of issue 34: sequential ids, a hundred addresses in turn, never reading.
    /// Its ledger is one run however long it goes on, and every request is answered once.
    @Test func aSlowClientWithSequentialIdsCostsOneRunAndEveryRequestIsAnswered() throws {
        var fixture = Self.fixture()
        let client = Array("A".utf8)
        let requests = 510_000  // 5 minutes at 1,700 requests/s
        for correlation in 1...UInt64(requests) {
            _ = Self.decide(&fixture.core, "A", Self.event(correlation, "counter/s\(correlation % 100)"), backlog: Self.full)
        }
        let owed = try #require(fixture.core.clientRules.ledger.owed[client])
        #expect(owed.count == requests)
        #expect(owed.runs.count == 1)
        #expect(owed.bytes <= 2 * OwedBusies.runBytes + 16)
        var answered: [UInt64] = []
        while true {
            let sent = fixture.core.releaseBusies(to: client, backlog: .empty)
            guard !sent.isEmpty else { break }
            answered += sent.compactMap { $0.sentToClient?.message.header.correlation }
        }
        #expect(answered == Array(1...UInt64(requests)), "every request answered exactly once, in order")
        #expect(fixture.core.clientRules.ledger.owed.isEmpty && fixture.core.clientRules.ledger.owedBytes == 0)
    }

    @Test func runsBreakOnlyWhereCorrelationsDoNotFollowAndMixedAddressesAreDropped() {
        var owed = OwedBusies()
        func owe(_ address: String, _ correlation: UInt64) {
            var address = address
            _ = address.withUTF8 { owed.owe(address: UnsafeRawBufferPointer($0), correlation: correlation, reason: .busy(.messages),
                                             budget: 1 << 20, room: 1 << 30) }
        }
        for (address, correlation) in [("a", 1), ("a", 2), ("b", 3), ("b", 9), ("b", 10)] as [(String, UInt64)] { owe(address, correlation) }
        #expect(owed.runs.map(\.count) == [3, 2])
        #expect(owed.runs.map(\.address) == [nil, "b"])
        #expect(owed.bytes == 2 * OwedBusies.runBytes + 1)
        var taken: [(UInt64, String?)] = []
        while let next = owed.next() { taken.append((next.correlation, next.address)) }
        #expect(taken.map(\.0) == [1, 2, 3, 9, 10])
        #expect(taken.map(\.1) == [nil, nil, nil, "b", "b"])
        #expect(owed.isEmpty && owed.runs.isEmpty && owed.bytes == 0)
    }

    /// Random ids cannot be kept as runs: past limits.owedBytesPerClient such requests go
    /// unanswered, which is logged; the ledger stays within its bytes, and other clients are
    /// not affected.
    @Test func aClientWithRandomIdsIsBoundedInBytesAndItsLostRepliesAreLogged() throws {
        let perClient = 100 * OwedBusies.runBytes
        var fixture = Self.fixture(.init(owedBytesPerClient: perClient, owedBytes: 150 * OwedBusies.runBytes))
        let client = Array("A".utf8)
        var warnings: [String] = []
        for correlation in stride(from: 1, through: 20_401, by: 2) as StrideThrough<UInt64> {
            if case .act(let actions) = Self.decide(&fixture.core, "A", Self.event(correlation, "counter/k"), backlog: Self.full) {
                warnings += actions.compactMap { if case .warn(let text) = $0 { text } else { nil } }
            }
        }
        let owed = try #require(fixture.core.clientRules.ledger.owed[client])
        #expect(owed.bytes <= perClient)
        #expect(owed.count == owed.runs.count && owed.count <= 100)
        #expect(fixture.core.clientRules.ledger.lost[client] == 10_201 - owed.count)
        #expect(warnings.count == 3, "the first falling behind, the first lost, the 10,000th lost: \(warnings)")
        #expect(warnings.last?.contains("limits.owedBytesPerClient") == true)
        // Every client together: B gets what is left of limits.owedBytes, then loses too.
        for correlation in stride(from: 1, through: 201, by: 2) as StrideThrough<UInt64> {
            _ = Self.decide(&fixture.core, "B", Self.event(correlation, "counter/k"), backlog: Self.full)
        }
        let other = try #require(fixture.core.clientRules.ledger.owed[Array("B".utf8)])
        #expect(fixture.core.clientRules.ledger.owedBytes == owed.bytes + other.bytes)
        #expect(fixture.core.clientRules.ledger.owedBytes <= 150 * OwedBusies.runBytes)
        #expect(other.count > 0 && fixture.core.clientRules.ledger.lost[Array("B".utf8), default: 0] > 0)
        // A client that goes away frees its part.
        fixture.core.forget(client: client)
        #expect(fixture.core.clientRules.ledger.owedBytes == other.bytes)
        #expect(fixture.core.clientRules.ledger.lost[client] == nil)
    }

    @Test func addressesAreKeptWithinHalfTheBudgetOnly() throws {
        var fixture = Self.fixture(.init(owedBytesPerClient: 1000, owedBytes: 1 << 20))
        for correlation in stride(from: 1, through: 39, by: 2) as StrideThrough<UInt64> {
            _ = Self.decide(&fixture.core, "A", Self.event(correlation, "counter/" + String(repeating: "x", count: 100)),
                            backlog: Self.full)
        }
        let owed = try #require(fixture.core.clientRules.ledger.owed[Array("A".utf8)])
        #expect(owed.runs.count < 20)
        #expect(owed.bytes <= 1000)
        #expect(owed.runs.first?.address != nil, "the first address fits")
        #expect(owed.runs.last?.address == nil, "past half the budget the runs go without")
    }

    // MARK: - Keyed instances

    @Test func aNewKeyPastTheInstanceLimitIsBusyAndExistingKeysKeepWorking() throws {
        var fixture = Self.fixture(.init(instancesPerMachine: 3))
        for key in ["a", "b", "c"] { _ = try fixture.sendEvent("A", to: "counter/\(key)", correlation: 1) }
        let refused = fixture.fromClient("A", Self.event(9, "counter/d"))
        let error = try errorReply(in: refused, to: "A", correlation: 9)
        #expect(error.code == .busy)
        #expect(error.message.contains("limits.instancesPerMachine") && error.message.contains("has 3 keyed instances"))
        #expect(error.address == "counter/d")
        #expect(fixture.core.keyedInstances["counter"]?.count == 3)
        // Existing keys keep working, gets of unknown keys are not events, other machines have their own count.
        _ = try fixture.sendEvent("A", to: "counter/b", correlation: 10)
        _ = try fixture.sendEvent("A", to: "poller/x", #"{"go":{}}"#, correlation: 11)
        #expect(fixture.fromClient("A", WireMessage(Header(.get, correlation: 12), address: "counter/e")).first?.sentToWorker != nil)
        // Refused twice (the cache remembers the address as not listed), then a removed instance frees its place.
        #expect(try errorReply(in: fixture.fromClient("A", Self.event(13, "counter/d")), to: "A", correlation: 13).code == .busy)
        fixture.core.forgetInstance("counter/a")
        _ = try fixture.sendEvent("A", to: "counter/d", correlation: 14)
        #expect(fixture.core.keyedInstances["counter"].map(Set.init) == ["counter/b", "counter/c", "counter/d"])
    }

    @Test func theResolvedAddressCacheIsBoundedInBytes() {
        var fixture = Self.fixture()
        #expect(fixture.core.resolvedBytesLimit == 8 << 20)
        // 9,000 such addresses would cross the real limit; a smaller one keeps the test quick
        // (in a debug build each request here costs a copy of the growing pending table).
        fixture.core.resolvedBytesLimit = 100_000
        let key = String(repeating: "k", count: 1000)
        for index in 0..<150 {
            _ = fixture.fromClient("A", WireMessage(Header(.get, correlation: UInt64(index)), address: "counter/\(key)\(index)"))
        }
        #expect(fixture.core.resolvedBytes <= 100_000)
        #expect(fixture.core.resolved.count < 150)
    }

    // MARK: - One form for addresses

    /// `counter/e\u{301}` is the same Swift string as `counter/é` (which lookups, the worker's
    /// instances and the listing treat as one) but other bytes (which grants and placement
    /// compare): it is refused, so a grant `counter/e*` cannot reach `counter/é`.
    @Test func addressesNotInNFCAreRefusedSoGrantsAndLookupsAgree() throws {
        var fixture = Self.fixture()
        let decomposed = "counter/e\u{301}"
        #expect(decomposed == "counter/é", "the premise: Swift compares canonically")
        #expect(Array(decomposed.utf8) != Array("counter/é".utf8))
        let grant = Topology.ClientGrant(key: "k", roles: [.send], machines: ["counter/e*"])
        #expect(grant.covers(address: decomposed) && !grant.covers(address: "counter/é"), "the premise: grants compare bytes")
        let principal = Gatekeeper.Principal.client([grant])
        let refused = Self.decide(&fixture.core, "A", Self.event(1, decomposed), as: principal)
        guard case .act(let actions) = refused else { Issue.record("refused: \(refused)"); return }
        let error = try errorReply(in: actions, to: "A", correlation: 1)
        #expect(error.code == .malformedFrame)
        #expect(error.message.contains("Normalization Form C") && error.message.contains("\"counter/é\""))
        #expect(fixture.core.keyedInstances["counter"] == nil)
        // The NFC form: the grant does not cover it.
        guard case .act(let forbidden) = Self.decide(&fixture.core, "A", Self.event(2, "counter/é"), as: principal) else {
            Issue.record("counter/é is not covered by counter/e*")
            return
        }
        #expect(try errorReply(in: forbidden, to: "A", correlation: 2).code == .forbidden)
        // ASCII, and NFC that is not ASCII, pass.
        #expect(AddressChecks.isNFC("counter/plain") && AddressChecks.isNFC("counter/é") && AddressChecks.isNFC("poller/東京"))
        #expect(!AddressChecks.isNFC("poller/\u{1100}\u{1161}"), "a decomposed Hangul syllable is not NFC")
        #expect(Array("counter/plain ~".utf8).withUnsafeBytes(AddressChecks.isPrintableASCII))
        #expect(!Array("counter/é".utf8).withUnsafeBytes(AddressChecks.isPrintableASCII))
        guard case .forward = Self.decide(&fixture.core, "A", Self.event(3, "counter/é")) else {
            Issue.record("an NFC address is served")
            return
        }
    }

    /// A reviewer's forged log line: an address holding a newline wrote a line of its own into the
    /// coordinator's and the worker's logs and into `fsm-send quarantines`.
    @Test(arguments: ["crash/q\ncritical grove: FORGED", "counter/a\rb", "counter/\u{7F}", "counter/\u{85}x", "counter/\u{2028}", "counter/\u{1B}[31m"])
    func addressesWithControlCharactersAreRefused(address: String) throws {
        var fixture = Self.fixture()
        guard case .act(let actions) = Self.decide(&fixture.core, "A", Self.event(1, address)) else {
            Issue.record("\(address.debugDescription) was forwarded")
            return
        }
        let error = try errorReply(in: actions, to: "A", correlation: 1)
        #expect(error.code == .malformedFrame)
        #expect(error.message.contains("control character U+") && !error.message.contains(address), "\(error.message)")
        #expect(!Array(address.utf8).withUnsafeBytes(AddressChecks.isPrintableASCII))
    }
}
