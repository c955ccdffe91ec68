FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY control-plane ./control-plane
COPY proxy ./proxy
COPY shared ./shared
COPY migrations ./migrations
COPY models.example.json ./
ENV NODE_ENV=production
# DATA_DIR (the proxy's settlement outbox, or the embedded store) must be writable by the runtime user.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
# The compose file picks the half: `npm run control-plane` or `npm run proxy`.
CMD ["npm", "start"]
