"""Live pages: the websocket consumer, what a page subscribes to, the HTML pushed to it, and
the watch hub (hub/) that produces the pushes.
"""
