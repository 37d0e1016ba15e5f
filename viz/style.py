"""viz's visual language, in one place.

Colours are tints of the Okabe–Ito palette (safe for the common colour-vision
deficiencies), always used as *fills* behind dark text, so every node reads the same on
JupyterLab's light and dark themes. The background is transparent; edges and cluster
frames are a mid grey that shows on white and on near-black.

=================  ====================  ==============================================
role               look                  meaning
=================  ====================  ==============================================
output             bluish-green box      a tensor you passed to draw() (e.g. the loss)
fn                 sky-blue rounded box  a grad_fn node (backward view), e.g. MulBackward0
op                 sky-blue rounded box  the operation behind a grad_fn (values view)
leaf               orange box            AccumulateGrad and the leaf tensor it feeds
tensor             yellow box            an intermediate tensor (values view)
saved row          reddish-purple row    a tensor the node saved for backward (show_saved)
attr row           grey row              a non-tensor value the node saved (show_attrs)
badge row          vermillion row        retain_grad, tensor hooks, node hooks/prehooks
None               faint dashed box      ``(None, 0)`` in next_functions: no gradient
                                         flows to that input (a constant)
hidden             grey dashed box       nodes collapsed by max_nodes, with their count
module             blue rounded box      a module folded into one box (fold="module"); "×N" for
                                         N repeated blocks (the layers of a Transformer)
ghost              dashed border         one copy per use of a leaf used > 3 times
module cluster     dashed grey frame     nodes whose ``metadata["module"]`` names it
=================  ====================  ==============================================

Edges in the backward view point the way gradients flow (from the output down to the
leaves) and read, on one line, "(5, 8) · mat1": the gradient's shape and the input it is the
gradient of (its slot in the node it enters when not 0); the player adds the value on that
line. In the values view they point the way data flows, as micrograd draws them.
"""

from __future__ import annotations

# Okabe–Ito, and the 50 % tints used as fills.
OKABE_ITO = {
    "orange": "#E69F00", "sky_blue": "#56B4E9", "bluish_green": "#009E73", "yellow": "#F0E442",
    "blue": "#0072B2", "vermillion": "#D55E00", "reddish_purple": "#CC79A7", "black": "#000000",
}
TINT = {
    "orange": "#F2CF80", "sky_blue": "#AADAF4", "bluish_green": "#80CEB9", "yellow": "#F7F1A0",
    "blue": "#80B8D8", "vermillion": "#EAAE80", "reddish_purple": "#E5BCD3",
}

TEXT = "#1A1A1A"
BORDER = "#4D4D4D"
MUTED_TEXT = "#4A4A4A"  # at least 4.5:1 (WCAG AA) on every fill below
EDGE = "#8C8C8C"  # lines only: text beside them is EDGE_TEXT
EDGE_TEXT = "#595959"  # 7:1 on white; the player recolours it for dark themes
FAINT_EDGE = "#8C8C8C99"
FONT = "Helvetica,Arial,sans-serif"

# Point sizes. Nothing is smaller than SMALL_PT: at the player's smallest default zoom (0.8) a
# 10 pt text is 10.7 CSS px, still readable on a projector.
SMALL_PT = 10
TITLE_PT = 12

FILL = {
    "output": TINT["bluish_green"],
    "fn": TINT["sky_blue"],
    "op": TINT["sky_blue"],
    "leaf": TINT["orange"],
    "tensor": TINT["yellow"],
    "none": "#E6E6E6",
    "hidden": "#D4D4D4",
    "unwalked": "#D4D4D4",
    "module": "#A8CDE4",  # the blue tint, lighter: muted text on it reads at 4.5:1 or more
}
ROW_FILL = {
    "saved": TINT["reddish_purple"],
    "attr": "#E0E0E0",
    "badge": TINT["vermillion"],
    "data": "#FFFFFF",
    "grad": "#FFFFFF",
    "note": None,
    "source": "#FFF8DC",  # draw(source=True): the line of code that made the node
    "tangent": TINT["yellow"],  # a dual tensor's tangent (forward mode)
}
ROUNDED_ROLES = frozenset({"fn", "op", "module"})
DASHED_ROLES = frozenset({"none", "hidden", "unwalked"})

TOOLTIPS = {
    "output": "a tensor given to draw(): backward starts here",
    "fn": "a grad_fn node: it turns the gradient of its output into gradients of its inputs",
    "op": "the operation that made the tensor below; its grad_fn is named underneath",
    "leaf": "AccumulateGrad: adds the gradient it receives into this leaf's .grad",
    "tensor": "an intermediate tensor",
    "none": "(None, 0) in next_functions: this input is a constant or does not require grad, "
            "so no gradient flows to it",
    "hidden": "nodes collapsed to keep the picture readable; raise max_nodes to see them",
    "unwalked": "the walk stopped here: the graph is larger than viz walks",
    "module": "a module folded into one box: draw(..., expand=[its name]) opens it",
}

# Graphviz attributes. The layout guard keeps dot's network-simplex and crossing
# minimisation passes short, so big graphs stay fast (quality barely changes).
GRAPH_ATTRS = {
    "bgcolor": "transparent",
    "fontname": FONT,
    "fontcolor": EDGE,
    # tight: a 3-layer MLP's backward graph fits whole on a 1920x1080 projector at 80% zoom or more
    "nodesep": "0.15",
    "ranksep": "0.2",
    "newrank": "true",
}
GUARD_ATTRS = {"nslimit": "2", "nslimit1": "2", "mclimit": "0.3", "searchsize": "20"}
GUARD_FROM_NODES = 80  # below this many nodes, let dot take its time for the best layout
# Past this many nodes, or this many ranks crossed by long edges, straight edges: spline
# routing is then the slowest part of dot, and curves no longer help anyone read the picture.
STRAIGHT_FROM_NODES = 400
STRAIGHT_FROM_CROSSINGS = 400
STRAIGHT_ATTRS = {"splines": "line"}
NODE_ATTRS = {"shape": "plain", "fontname": FONT, "fontsize": str(TITLE_PT), "fontcolor": TEXT}
EDGE_ATTRS = {"color": EDGE, "fontcolor": EDGE_TEXT, "fontname": FONT, "fontsize": str(SMALL_PT), "arrowsize": "0.6"}
CLUSTER_ATTRS = {"style": "dashed,rounded", "color": EDGE, "fontcolor": EDGE_TEXT, "fontsize": str(SMALL_PT + 1),
                 "margin": "4"}

# viz.layers: nodes that backward made under create_graph (the graph of the backward pass), and the dashed
# link from each to the first-order node whose rule made it.
LAYER2_FILL = "#F2DCE8"  # the reddish-purple tint, lighter: text on it reads like on the other fills
LAYER2_LINK = OKABE_ITO["reddish_purple"]

LEGEND = (  # (role, sample title, meaning): draw(legend=True) lists the roles its picture shows
    ("output", "output", "a tensor you drew"),
    ("fn", "MulBackward0", "grad_fn node"),
    ("op", "*", "the op behind a grad_fn"),
    ("leaf", "AccumulateGrad", "leaf tensor it feeds"),
    ("tensor", "tensor", "intermediate tensor"),
    ("none", "None", "no gradient (constant)"),
    ("module", "⊞ module", "a folded module: expand=[...]"),
    ("hidden", "⋯ N hidden", "collapsed by max_nodes"),
    ("ghost", "dashed", "the same node, drawn again"),
)
