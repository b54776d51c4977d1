@testable import GroveCluster
import GroveWire
import Testing

/// The rules for clients that do not read, on their own: no coordinator, no socket, the backlog a
/// driver would report fed in, the actions checked (docs/DIRECT-ROUTES.md, 2.3: a worker serving
/// clients directly holds the same value).
@Suite("Client rules", .timeLimit(.minutes(2)))
struct ClientRulesTests {
    static let client = Array("A".utf8)

    static func rules(clientOutbox: Int = 10, clientOutboxBytes: Int = 4096, owedBytesPerClient: Int = 1 << 20,
                      owedBytes: Int = 32 << 20) -> ClientRules {
        ClientRules(clientOutbox: clientOutbox, clientOutboxBytes: clientOutboxBytes, owedBytesPerClient: owedBytesPerClient,
                    owedBytes: owedBytes, addressBytes: 64, payloadBytes: 1000)
    }

    static func owe(_ rules: inout ClientRules, _ correlation: UInt64, address: String = "counter/7", refusal: OwedReason? = nil,
                    backlog: ClientBacklog, client: [UInt8] = client) -> [ClientRuleAction]? {
        Array(address.utf8).withUnsafeBytes {
            rules.owesBusy(to: client, correlation: correlation, address: refusal == nil ? $0 : nil, refusal: refusal, backlog: backlog)
        }
    }

    static func sent(_ actions: [ClientRuleAction]) -> [WireMessage] {
        actions.compactMap { if case .send(let to, let message) = $0, to == client { message } else { nil } }
    }

    @Test func aClientUnderItsLimitsOwesNothing() {
        var rules = Self.rules()
        #expect(Self.owe(&rules, 1, backlog: .empty) == nil)
        #expect(Self.owe(&rules, 2, backlog: ClientBacklog(messages: 9, bytes: 4095)) == nil)
        #expect(!rules.owesAny && rules.ledger.owed.isEmpty)
    }

    @Test func requestsPastTheMessageLimitAreOwedBusiesReleasedInOrderWhenThereIsRoom() throws {
        var rules = Self.rules()
        let full = ClientBacklog(messages: 10, bytes: 500)
        let first = try #require(Self.owe(&rules, 1, backlog: full))
        guard case .warn(let line)? = first.first, first.count == 1 else {
            Issue.record("the first owed busy is logged once: \(first)")
            return
        }
        #expect(line.contains("answered busy until it catches up") && line.contains("client 41"))
        for correlation in 2...4 as ClosedRange<UInt64> {
            #expect(Self.owe(&rules, correlation, backlog: full) == [])
        }
        #expect(rules.ledger.owed[Self.client]?.count == 4 && rules.ledger.owed[Self.client]?.runs.count == 1)
        #expect(rules.clientsOwed == [Self.client])
        // Still full: nothing. Room for two: two, in order, then what they count.
        #expect(rules.releaseBusies(to: Self.client, backlog: full).isEmpty)
        let two = rules.releaseBusies(to: Self.client, backlog: ClientBacklog(messages: 8, bytes: 400))
        #expect(Self.sent(two).map(\.header.correlation) == [1, 2])
        #expect(two.last == .countedBusies(2))
        let busy = try #require(Self.sent(two).first?.wireError)
        #expect(busy.code == .busy && busy.address == "counter/7")
        #expect(busy.message.contains("10 replies waiting unread") && busy.message.contains("queues.clientOutbox"))
        let rest = rules.releaseBusies(to: Self.client, backlog: .empty)
        #expect(Self.sent(rest).map(\.header.correlation) == [3, 4])
        #expect(!rules.owesAny && rules.ledger.owedBytes == 0)
    }

    @Test func requestsPastTheByteLimitAreOwedBusiesNamingIt() throws {
        var rules = Self.rules()
        #expect(Self.owe(&rules, 1, backlog: ClientBacklog(messages: 1, bytes: 4096))?.count == 1)
        let busy = try #require(Self.sent(rules.releaseBusies(to: Self.client, backlog: .empty)).first?.wireError)
        #expect(busy.code == .busy && busy.message.contains("4096 bytes or more") && busy.message.contains("queues.clientOutboxBytes"))
    }

    @Test func aRefusalForASizeIsOwedAsItselfAndCountsNoBusy() throws {
        var rules = Self.rules()
        let full = ClientBacklog(messages: 10, bytes: 500)
        #expect(Self.owe(&rules, 1, refusal: .payloadTooLarge, backlog: full) != nil)
        #expect(Self.owe(&rules, 2, refusal: .addressTooLong, backlog: full) == [])
        let released = rules.releaseBusies(to: Self.client, backlog: .empty)
        #expect(released.count == 2, "the two refusals, and no count of busies: \(released)")
        let errors = Self.sent(released).compactMap(\.wireError)
        #expect(errors.map(\.code) == [.oversized, .malformedFrame])
        #expect(errors[0].message.contains("at most 1000") && errors[1].message.contains("at most 64 are accepted"))
        #expect(errors.allSatisfy { $0.address == nil }, "no address kept for a request refused for its size")
    }

    @Test func aFullLedgerLosesRequestsAndSaysSoOnce() {
        // Room for one run: ids that do not count up cannot share it.
        var rules = Self.rules(owedBytesPerClient: OwedBusies.runBytes + 16)
        let full = ClientBacklog(messages: 10, bytes: 500)
        #expect(Self.owe(&rules, 1, backlog: full)?.count == 1)
        guard case .warn(let line)? = Self.owe(&rules, 5, backlog: full)?.first else {
            Issue.record("the first request lost is logged")
            return
        }
        #expect(line.contains("can no longer remember") && line.contains("limits.owedBytesPerClient"))
        #expect(Self.owe(&rules, 9, backlog: full) == [])
        #expect(rules.ledger.lost[Self.client] == 2 && rules.ledger.owed[Self.client]?.count == 1)
        rules.forget(client: Self.client)
        #expect(rules.ledger.lost[Self.client] == nil && !rules.owesAny && rules.ledger.owedBytes == 0)
    }

    @Test func aReplyThatDoesNotFitIsReplacedByReplyDropped() throws {
        var rules = Self.rules()
        func admit(_ size: Int, _ backlog: ClientBacklog) -> (replacement: WireMessage, warning: String?)? {
            rules.admitReply(to: Self.client, size: size, kind: .state, correlation: 7, address: "counter/7", backlog: backlog)
        }
        #expect(admit(3000, .empty) == nil, "the one message that waits may pass the budget")
        #expect(admit(ClientRules.smallReply, ClientBacklog(messages: 5, bytes: 10_000)) == nil)
        #expect(admit(2000, ClientBacklog(messages: 1, bytes: 2096)) == nil)
        let first = try #require(admit(2001, ClientBacklog(messages: 1, bytes: 2096)))
        let error = try #require(first.replacement.wireError)
        #expect(error.code == .replyDropped && first.replacement.header.correlation == 7 && error.address == "counter/7")
        #expect(first.warning?.contains("1 dropped so far") == true)
        #expect(try #require(admit(2001, ClientBacklog(messages: 2, bytes: 2096))).warning == nil)
        #expect(rules.ledger.dropped[Self.client] == 2)
        rules.forget(client: Self.client)
        #expect(rules.ledger.dropped.isEmpty)
    }

    @Test func anotherClientIsNotHeldToAFullOnesQueue() throws {
        var rules = Self.rules()
        _ = Self.owe(&rules, 1, backlog: ClientBacklog(messages: 10, bytes: 500))
        #expect(rules.owesAny)
        #expect(Self.owe(&rules, 1, backlog: .empty, client: Array("B".utf8)) == nil)
    }
}
