import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin behind GroveWire's macros.
@main
struct GroveMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [BinaryCodableMacro.self]
}
