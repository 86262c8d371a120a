"""Check boxes whose state shows by glyph, not only by colour: `X` when on, blank when off.

Textual draws the same `X` for both states and tells them apart by colour alone, which
is lost on a monochrome terminal, to colour blindness and in a copied screen.
"""

from __future__ import annotations

from rich.segment import Segment
from textual.content import Content
from textual.strip import Strip
from textual.widgets import Checkbox, SelectionList
from textual.widgets._toggle_button import ToggleButton
from textual.widgets.option_list import OptionDoesNotExist

ON = "X"
OFF = " "


class GlyphCheckbox(Checkbox):
    @property
    def _button(self) -> Content:
        self.BUTTON_INNER = ON if self.value else OFF
        return super()._button


class GlyphSelectionList(SelectionList[str]):
    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        try:
            option = self.get_option_at_index(self.scroll_offset.y + y)
        except OptionDoesNotExist:
            return strip
        segments = list(strip)
        if len(segments) < 2 or segments[1].text != ToggleButton.BUTTON_INNER:
            return strip
        glyph = ON if getattr(option, "value", None) in self.selected else OFF
        segments[1] = Segment(glyph, segments[1].style, segments[1].control)
        return Strip(segments, strip.cell_length)
