"""Chart blocks: the Markdown extension (:mod:`.extension`), the figure markup (:mod:`.markup`) and the pinned
Vega runtime copied into the site (:mod:`.assets`, ``vega-runtime.lock.json``).
"""
