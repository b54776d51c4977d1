public import Grove

/// A machine whose behaviour can be explored: it names sample events to try in every state, and
/// the states it declares, so that ``StateGraph/explore(_:limit:)`` can walk every state
/// reachable from the initial one.
///
/// Conform the type that owns the samples; `Checked` is the machine that runs. A ``Machine``
/// checks itself, a dialect type names its adapter:
/// ```swift
/// extension LoginFlow: Checkable {
///     public typealias Checked = OakTransducer<LoginFlow>
///     public static var sampleEvents: [Event] { [.startLogin, .updateEmail("a@b.c"), …] }
///     public static var declaredStates: [State] { [.start, .completed, …] }
/// }
/// ```
/// Events with payloads need one sample per case at least; states reachable only through a
/// payload the samples never use stay unexplored. When `Event` or `State` is `CaseIterable`, its
/// `allCases` are the default samples.
public protocol Checkable {
    /// The machine the check runs.
    associatedtype Checked: Machine

    /// The name reports and graphs use; defaults to the type's name.
    static var checkName: String { get }

    /// Events tried in every reachable state.
    static var sampleEvents: [Checked.Event] { get }

    /// One value for every state case the machine declares, so that cases the walk never reaches
    /// can be named. Empty by default: then only reachable states are known.
    static var declaredStates: [Checked.State] { get }

    /// How many events deep the walk goes from the initial state; `nil` (the default) for no
    /// bound. Machines whose state grows without end, such as a navigation stack, set one.
    static var maxDepth: Int? { get }

    /// Pairs meant to change nothing and do nothing, by state case and event cases as reports
    /// name them: `["loading": ["refresh"]]` when a refresh while loading is ignored on purpose.
    /// The walk cannot tell such a pair from one a `default:` swallows, so it reports every
    /// pair that falls through unless it is named here; those it lists as intended. Empty by
    /// default.
    static var intendedNoOps: [String: [String]] { get }

    /// The node a state is drawn as: by default its enum case name (`enteringCredentials`).
    static func node(of state: Checked.State) -> String

    /// The label an event is drawn with: by default its enum case name (`updateEmail`).
    static func label(of event: Checked.Event) -> String
}

extension Checkable {
    public static var checkName: String { String(describing: Self.self) }

    public static var declaredStates: [Checked.State] { [] }

    public static var maxDepth: Int? { nil }

    public static var intendedNoOps: [String: [String]] { [:] }

    public static func node(of state: Checked.State) -> String { caseName(of: state) }

    public static func label(of event: Checked.Event) -> String { caseName(of: event) }
}

extension Checkable where Checked.Event: CaseIterable {
    public static var sampleEvents: [Checked.Event] { Array(Checked.Event.allCases) }
}

extension Checkable where Checked.State: CaseIterable {
    public static var declaredStates: [Checked.State] { Array(Checked.State.allCases) }
}

/// The case name of an enum value (`failed` for `.failed(error)`); other values as described.
public func caseName(of value: Any) -> String {
    let mirror = Mirror(reflecting: value)
    if mirror.displayStyle == .enum, let label = mirror.children.first?.label { return label }
    let description = String(describing: value)
    return description.split(separator: "(", maxSplits: 1).first.map(String.init) ?? description
}
