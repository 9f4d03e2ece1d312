"""What every request and page shares: security headers, request ids, the person's time zone,
theme and language threads, query-string numbers, template context.
"""
